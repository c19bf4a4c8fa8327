"""Our entries in Claude Code's settings.json: merged in, recognised, removed.

`hooks install` adds one hook per event, {"type": "command", "command": "<emergent-memory>
hook <Event>", "timeout": N}, in a matcher group of its own (with the event's HOOK_MATCHERS
entry as its "matcher", if any), and keeps every other key and
hook as it is. An entry is ours when its command is our executable (`emergent-memory`, or
`python -m emergent_memory`) followed by `hook <Event>`, so `hooks uninstall` removes ours
and nothing else. A file that is not valid JSON (or not shaped as settings) is refused,
never overwritten.
"""

from __future__ import annotations

import copy
import json
import os
import shlex
import time
from pathlib import Path
from typing import Any

from emergent_memory.hooks.run import EVENTS as EVENTS  # the events `hook` handles
from emergent_memory.hooks.state import write_atomically

# Seconds Claude Code lets each hook run (the hooks' own budgets, hooks/run.py BUDGETS, are
# under them, the watchdog's grace included): SessionStart may start the server and wait for
# it; SessionEnd would otherwise get Claude Code's default of about 1.5 s.
HOOK_TIMEOUTS = {
    "SessionStart": 15,
    "UserPromptSubmit": 5,
    "Stop": 15,
    "PreCompact": 15,
    "SessionEnd": 5,
    "PostToolUse": 5,
}
# The tools each event's hook runs after (its matcher group's "matcher"; none: every time).
# PostToolUse: Claude Code writes its auto memory with Write, Edit and MultiEdit, and deletes
# with Bash (hooks/auto_memory.py; the hook does nothing for a call that does not touch the
# memory folder).
HOOK_MATCHERS = {"PostToolUse": "Write|Edit|MultiEdit|Bash"}
EXECUTABLE_NAMES = frozenset({"emergent-memory", "emergent-memory.exe"})


# The Claude Code plugin's command (integrations/claude-code/hooks/hooks.json): its launcher,
# which finds the emergent-memory executable (integrations/claude-code/scripts/emergent-memory).
PLUGIN_PROGRAM = '"${CLAUDE_PLUGIN_ROOT}/scripts/emergent-memory"'


class SettingsFileError(Exception):
    """The settings file cannot be used as it is; the message says what to fix."""


def read_settings(path: Path) -> dict[str, Any]:
    """The settings in `path` ({} when there is no file). Raises SettingsFileError."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as error:
        raise SettingsFileError(f"cannot read {path}: {error}") from None
    if not text.strip():
        return {}
    try:
        settings = json.loads(text)
    except ValueError as error:
        raise SettingsFileError(
            f"{path} is not valid JSON ({error}); fix it (or move it away) and run the "
            "command again: nothing was changed"
        ) from None
    if not isinstance(settings, dict):
        raise SettingsFileError(f"{path} does not hold a JSON object; nothing was changed")
    hooks = settings.get("hooks", {})
    if not isinstance(hooks, dict):
        raise SettingsFileError(f'"hooks" in {path} is not an object; nothing was changed')
    for event, groups in hooks.items():
        if not isinstance(groups, list) or not all(
            isinstance(group, dict) and isinstance(group.get("hooks", []), list) for group in groups
        ):
            raise SettingsFileError(
                f'"hooks.{event}" in {path} is not a list of {{"matcher", "hooks": [...]}} '
                "groups; nothing was changed"
            )
    return settings


def hook_command(program: str, event: str) -> str:
    """The command of our hook for `event`; `program` is already quoted for a shell."""
    return f"{program} hook {event}"


def is_ours(hook: object, event: str | None = None) -> bool:
    """Whether a hook entry runs our `hook` command (for `event`, if given)."""
    if not isinstance(hook, dict) or hook.get("type") != "command":
        return False
    command = hook.get("command")
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if len(words) < 3 or words[-2] != "hook" or words[-1] not in EVENTS:
        return False
    if event is not None and words[-1] != event:
        return False
    program = words[:-2]
    if len(program) == 1:
        return Path(program[0]).name in EXECUTABLE_NAMES
    return program[-2:] == ["-m", "emergent_memory"]


def our_group(program: str, event: str) -> dict[str, Any]:
    hook = {"type": "command", "command": hook_command(program, event)}
    group: dict[str, Any] = {"hooks": [hook | {"timeout": HOOK_TIMEOUTS[event]}]}
    if event in HOOK_MATCHERS:
        group = {"matcher": HOOK_MATCHERS[event], **group}
    return group


def plugin_hooks() -> dict[str, Any]:
    """The plugin's hooks/hooks.json: the same entries as `hooks install` writes, run by the
    plugin's launcher (tests/test_claude_plugin.py keeps the file equal to this)."""
    return {"hooks": {event: [our_group(PLUGIN_PROGRAM, event)] for event in EVENTS}}


def with_our_hooks(settings: dict[str, Any], program: str) -> dict[str, Any]:
    """The settings with our hook for every event: unchanged where it is there already
    exactly so; else our old entries are replaced by one group at the end."""
    result = copy.deepcopy(settings)
    hooks = result.setdefault("hooks", {})
    for event in EVENTS:
        wanted = our_group(program, event)
        groups: list[Any] = hooks.get(event, [])
        holding = [group for group in groups if any(is_ours(h, event) for h in group["hooks"])]
        if holding == [wanted]:
            continue
        hooks[event] = [*_without_ours(groups, event), wanted]
    return result


def without_our_hooks(settings: dict[str, Any]) -> dict[str, Any]:
    """The settings without any of our hooks; a group, an event or "hooks" that held only
    ours goes too (ones that were empty already stay)."""
    result = copy.deepcopy(settings)
    hooks = result.get("hooks")
    if not isinstance(hooks, dict):
        return result
    for event in list(hooks):
        groups = hooks[event]
        kept = _without_ours(groups, event)
        if len(kept) != len(groups) or kept != groups:
            if kept:
                hooks[event] = kept
            else:
                del hooks[event]
    if not hooks and "hooks" in settings and settings["hooks"]:
        del result["hooks"]
    return result


def _without_ours(groups: list[Any], event: str) -> list[Any]:
    kept = []
    for group in groups:
        hooks = [hook for hook in group["hooks"] if not is_ours(hook, event)]
        if len(hooks) == len(group["hooks"]):
            kept.append(group)
        elif hooks:
            kept.append(group | {"hooks": hooks})
    return kept


def our_events(settings: dict[str, Any]) -> dict[str, list[str]]:
    """For each event with our hook in these settings, the commands."""
    found: dict[str, list[str]] = {}
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return found
    for event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else []:
            for hook in group.get("hooks", []) if isinstance(group, dict) else []:
                if is_ours(hook, event):
                    found.setdefault(event, []).append(hook["command"])
    return found


def render(settings: dict[str, Any]) -> str:
    """Settings as written: two-space indentation, a final newline."""
    return json.dumps(settings, indent=2, ensure_ascii=False) + "\n"


def write_settings(path: Path, settings: dict[str, Any]) -> Path | None:
    """Replace the file atomically, after copying the previous one to a timestamped backup
    beside it; returns the backup (None when there was no file)."""
    backup = None
    mode = 0o644
    if path.exists():
        previous = path.read_bytes()
        mode = path.stat().st_mode & 0o777
        stamp = time.strftime("%Y%m%d-%H%M%S")
        backup = path.with_name(f"{path.name}.{stamp}.bak")
        number = 1
        while backup.exists():
            number += 1
            backup = path.with_name(f"{path.name}.{stamp}-{number}.bak")
        descriptor = os.open(backup, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        try:
            os.write(descriptor, previous)
        finally:
            os.close(descriptor)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, render(settings).encode("utf-8"), mode=mode)
    os.chmod(path, mode)
    return backup
