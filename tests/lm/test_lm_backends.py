"""The model backends: the shared stop-sequence rule and the deterministic backend."""

from __future__ import annotations

import time

import pytest

from study.lm.backends import DeterministicBackend, finish
from study.lm.choose import load_backend


def test_finish_cuts_before_the_earliest_stop_and_keeps_tokens_aligned() -> None:
    generation = finish([" He", " left", ".\n", "Then"], [-1.0, -2.0, -3.0, -4.0], ["\n", "left"], True)
    assert generation.text == " He "
    assert generation.tokens == [" He", " "]
    assert generation.token_logprobs == [-1.0, -2.0]
    assert generation.finish_reason == "stop"


def test_finish_says_length_when_the_model_was_cut_off() -> None:
    generation = finish([" He", " left"], [-1.0, -2.0], ["."], ended=False)
    assert (generation.text, generation.finish_reason) == (" He left", "length")


def test_deterministic_backend_repeats_itself_for_the_same_request() -> None:
    backend = DeterministicBackend()
    first = backend.generate("Once upon a time", n=3, max_tokens=30, temperature=0.9, seed=3)
    again = backend.generate("Once upon a time", n=3, max_tokens=30, temperature=0.9, seed=3)
    other = backend.generate("Once upon a time", n=3, max_tokens=30, temperature=0.9, seed=4)
    assert first == again
    assert [g.text for g in first] != [g.text for g in other]
    assert len({g.text for g in first}) == 3


def test_deterministic_backend_writes_sentences_that_continue_the_prompt() -> None:
    backend = DeterministicBackend()
    [mid_line] = backend.generate("He said", max_tokens=100)
    [new_line] = backend.generate("He said.\n", max_tokens=100)
    assert mid_line.text.startswith(" ") and mid_line.text[1].isupper()
    assert new_line.text[0].isupper()
    assert mid_line.text.rstrip()[-1] in ".!" and mid_line.finish_reason == "stop"
    assert "".join(mid_line.tokens) == mid_line.text
    assert len(mid_line.tokens) == len(mid_line.token_logprobs)


def test_deterministic_backend_can_answer_late() -> None:
    start = time.perf_counter()
    DeterministicBackend(delay=0.2).generate("x")
    assert time.perf_counter() - start >= 0.2


def test_load_backend_names_the_choices_for_a_typo() -> None:
    with pytest.raises(ValueError, match="auto, smollm2, deterministic or judge"):
        load_backend("gpt2")
    assert load_backend("deterministic", delay=1.5).delay == 1.5


def test_a_backend_loading_in_the_background_says_when_it_is_ready_or_why_it_failed():
    from study.lm.backends import BackgroundLoaded, BackendUnavailable, DeterministicBackend

    said: list[str] = []
    ready = BackgroundLoaded(DeterministicBackend, "good-model", said.append)
    assert ready.wait(10)
    assert len(said) == 1 and said[0].startswith("The model good-model is ready (loaded in ")

    def broken():
        raise OSError("no .gguf file found")

    failed = BackgroundLoaded(broken, "bad-model", said.append)
    assert not failed.wait(10)
    assert said[1] == "The model bad-model failed to load: no .gguf file found"
    with pytest.raises(BackendUnavailable, match="no .gguf file found"):
        failed.generate("Once")


def test_a_backend_loading_in_the_background_answers_503_until_ready():
    import threading

    import openai

    from study.lm.backends import BackgroundLoaded, DeterministicBackend
    from study.lm.server import serve_in_thread

    release = threading.Event()

    def slow_factory():
        release.wait(10)
        return DeterministicBackend()

    model = BackgroundLoaded(slow_factory, "slow-model")
    base_url, stop = serve_in_thread(model)
    try:
        client = openai.OpenAI(base_url=base_url, api_key="none", max_retries=0)
        with pytest.raises(openai.APIStatusError) as error:
            client.completions.create(model="any", prompt="Once", max_tokens=5)
        assert error.value.status_code == 503
        assert "still loading" in str(error.value)
        release.set()
        assert model.wait(10)
        answer = client.completions.create(model="any", prompt="Once", max_tokens=5)
        assert answer.choices[0].text
    finally:
        release.set()
        stop()


def test_a_model_that_failed_to_load_is_not_waited_for_as_one_still_loading():
    # `study demo` loads SmolLM2 in the background. Once the load has failed (a damaged weights
    # file), the ghost-text editor must not keep telling the writer "the assistant is getting
    # ready, trying again in 5 s" and asking again for ever: the model will never come.
    from study.config import Condition, SuggestionSettings
    from study.lm.backends import BackgroundLoaded
    from study.lm.server import serve_in_thread
    from study.paradigms.proactive.engine import ProactiveEngine
    from study.paradigms.proactive.settings import ProactiveSettings

    def broken():
        raise OSError("SmolLM2-135M-Instruct.Q4_1.gguf is cut short")

    model = BackgroundLoaded(broken, "smollm2-135m-instruct")
    assert not model.wait(10)
    base_url, stop = serve_in_thread(model)
    try:
        engine = ProactiveEngine(SuggestionSettings(endpoint=base_url), ProactiveSettings())
        result = engine.suggest(Condition(name="L1", model="smollm2", paradigm="L1"), "The door opened")
    finally:
        stop()
    assert result.retry_after is None  # not "getting ready": the calm "not available" line
    assert "failed to load" in result.error and "cut short" in result.error
