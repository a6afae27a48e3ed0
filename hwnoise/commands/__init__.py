"""One module per ``hwnoise`` subcommand, each with ``register(subparsers)``."""
