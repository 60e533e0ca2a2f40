"""emulate: a local Prolific (its researcher API and a participant's side) for a dry run."""

from __future__ import annotations

import click


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8478, show_default=True, type=click.IntRange(0, 65535),
              help="The port to listen on (0: any free one, printed).")
@click.option(
    "--state",
    "state_file",
    default="prolific-emulator.json",
    show_default=True,
    type=click.Path(dir_okay=False),
    help="Where the emulator keeps its state between runs (studies, submissions, payments).",
)
@click.option("--balance", default=100_000, show_default=True, type=int,
              help="The starting workspace balance in cents (a new state file only).")
@click.option("--currency", type=click.Choice(["USD", "GBP"]), default="USD", show_default=True,
              help="The workspace currency (a new state file only).")
@click.option("--fee-rate", default=0.333, show_default=True, type=float,
              help="Prolific's service fee as a share of rewards and bonuses (0.428 for "
              "companies; a new state file only).")
@click.option("--vat-rate", default=0.0, show_default=True, type=float,
              help="VAT on the service fee (0.2 for UK accounts; a new state file only).")
@click.option("--pay-delay", default=60.0, show_default=True, type=float,
              help="Emulator seconds before a bonus pay call is settled (Prolific pays "
              "asynchronously).")
@click.option("--token", default=None,
              help="The API token to accept (a new state file only; default: a random one).")
def emulate(host, port, state_file, balance, currency, fee_rate, vat_rate, pay_delay,
            token) -> None:
    """Serve a local Prolific speaking its researcher REST API under /api/v1/ for a dry run:
    point the client at the printed base URL with the printed token. Participants take part
    from the home page; the study sends them back to /submissions/complete?cc=CODE."""
    from study.prolific.emulator import State, serve
    from study.serve import announcer, listenable

    state = State(state_file, balance=balance, currency=currency, fee_rate=fee_rate,
                  vat_rate=vat_rate, pay_delay=pay_delay, token=token)
    state.data["pay_delay"] = pay_delay  # the one setting that may change between runs
    listenable(host, port)
    serve(state, host, port, announce=announcer(host, lambda url: [
        f"Prolific emulator on {url}  (state: {state_file})",
        f"  API base URL: {url}/api/v1/",
        f"  token:        {state.token}   (send: Authorization: Token {state.token})",
        f"  completion:   {url}/submissions/complete?cc=<code>",
        f"  participants: open {url}/ to take part in an ACTIVE study",
    ]))  # fmt: skip
