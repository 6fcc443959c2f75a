"""Write docs/cli.md from the commands' own --help (run after changing a command)."""

from __future__ import annotations

from pathlib import Path

import click

from brainiac.cli import cli

HEADER = """# CLI reference

Generated from `--help` by `python docs/generate_cli_reference.py`; do not edit by hand.

Every command takes the global `--vault PATH` (default: `$BRAINIAC_VAULT`, then `vault` in
`~/.config/brainiac/config.toml`, then `~/brainiac`) and `--debug` (tracebacks instead of one-line
errors).

Exit status: `0` success; `2` an error (one line on stderr naming the file, the problem and the
fix) or a usage error.
"""


def main() -> None:
    parts = [HEADER]
    with click.Context(cli, info_name="brainiac") as root:
        parts.append(f"## brainiac\n\n```\n{cli.get_help(root)}\n```\n")
        for name in sorted(cli.commands):
            command = cli.commands[name]
            with click.Context(command, info_name=name, parent=root) as ctx:
                parts.append(f"## brainiac {name}\n\n```\n{command.get_help(ctx)}\n```\n")
    out = Path(__file__).with_name("cli.md")
    out.write_text("\n".join(parts), encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
