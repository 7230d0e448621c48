"""`specops`: the entry point. Each command group lives in its own module.

Every command prints its result on stdout and its progress, logs and errors on stderr (streams.py).
"""

import typer

from .accept import accept
from .bench import bench
from .doctor import doctor
from .eval import eval_command
from .export import export
from .replay import replay
from .resume import resume
from .run import run
from .show import show
from .sim import sim_app
from .simulated_hosts import offer_simulated_hosts
from .streams import OneLineErrors, logs_to_stderr, redact_output

offer_simulated_hosts()  # `--host sim:...`: the built-in simulated hosts, offered to every command

app = typer.Typer(
    name="specops",
    cls=OneLineErrors,
    help="Deploy and benchmark speculative-decoding drafters on GPU hosts.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


@app.callback()
def _before_every_command(ctx: typer.Context) -> None:
    redact_output(ctx)
    logs_to_stderr(ctx)


app.command("run")(run)
app.add_typer(sim_app, name="sim")
app.command("doctor")(doctor)
app.command("bench")(bench)
app.command("accept")(accept)
app.command("replay")(replay)
app.command("resume")(resume)
app.command("show")(show)
app.command("eval")(eval_command)
app.command("export")(export)

if __name__ == "__main__":
    app()
