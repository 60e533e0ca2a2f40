"""emulate: a local MTurk endpoint for a dry run."""

from __future__ import annotations

import click


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8477, show_default=True, type=click.IntRange(0, 65535),
              help="The port to listen on (0: any free one, printed).")
@click.option(
    "--state",
    "state_file",
    default="mturk-emulator.json",
    show_default=True,
    type=click.Path(dir_okay=False),
    help="Where the emulator keeps its state between runs.",
)
@click.option(
    "--allow-http", is_flag=True, help="Accept http task URLs (the real MTurk needs https)."
)
@click.option(
    "--balance", default="10000.00", show_default=True, help="The starting balance in USD."
)
def emulate(host, port, state_file, allow_http, balance) -> None:
    """Serve a local MTurk endpoint (the real JSON protocol, checked against botocore's model)
    for a dry run: point the other commands at it with --endpoint-url."""
    from study.mturk import money
    from study.mturk.emulator import State, serve
    from study.serve import announcer, listenable

    try:  # stored as MTurk shows a balance ("50.00"): every payment is taken from it
        balance = money.usd(money.parse_usd(balance, what="--balance"))
    except money.MoneyError as error:
        raise click.BadParameter(str(error), param_hint="--balance") from None
    state = State(state_file, balance=balance, allow_http=allow_http)
    listenable(host, port)
    serve(state, host, port, announce=announcer(host, lambda url: [
        f"MTurk emulator on {url}  (state: {state_file})",
        f"  requester: study mturk post DIR --endpoint-url {url} --task-url https://.../task",
        f"  workers:   open {url}/ to accept a HIT as a worker; the task submits back here",
    ]))  # fmt: skip
