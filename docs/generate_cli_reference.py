"""Write docs/cli.md from the commands' own --help (run after changing a command)."""

from __future__ import annotations

from pathlib import Path

import click

from brainiac.interfaces.cli.root import cli

HEADER = """# CLI reference

Generated from `--help` by `python docs/generate_cli_reference.py`; do not edit by hand.

Every command takes the global `--vault PATH` (default: `$BRAINIAC_VAULT`, then `vault` in
`~/.config/brainiac/config.toml`, then `~/brainiac`) and `--debug` (tracebacks instead of one-line
errors).

Exit status: `0` success; `1` `check` found a conflict, a `hook` failed (never 2 there: Claude
Code reads 2 from a UserPromptSubmit hook as "block the prompt"), or `forget` matched nothing or
was not confirmed; `2` an error (one line on stderr naming the file, the problem and the fix), a
file `import` rejected, `forget` refused without a terminal or `--yes` or could not remove
something, or a usage error.

Commands that print data take `--json`. On a terminal, long work (a first index, `reindex`,
`import`) shows a progress bar on stderr; piped or scripted, nothing but the data is printed.
Shell completion: `brainiac completion bash|zsh|fish`.
"""


def _walk(group: click.Group, parent: click.Context, path: list[str]):  # type: ignore[no-untyped-def]
    """Every command below `group`, depth first, with its path and a context for its help."""
    for name in sorted(group.commands):
        command = group.commands[name]
        with click.Context(command, info_name=name, parent=parent) as ctx:
            yield [*path, name], command, ctx
            if isinstance(command, click.Group):
                yield from _walk(command, ctx, [*path, name])


def main() -> None:
    parts = [HEADER]
    with click.Context(cli, info_name="brainiac") as root:
        parts.append(f"## brainiac\n\n```\n{cli.get_help(root)}\n```\n")
        for path, command, ctx in _walk(cli, root, ["brainiac"]):
            parts.append(f"## {' '.join(path)}\n\n```\n{command.get_help(ctx)}\n```\n")
    out = Path(__file__).with_name("cli.md")
    out.write_text("\n".join(parts), encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
