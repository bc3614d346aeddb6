"""A model state kept per fixed prompt prefix, so a change of prompt family reads nothing again.

llama.cpp keeps the tokens of the last prompt it read and, for the next prompt, reads only
what differs after their common start. The small model's answer prompt starts with ~700 tokens
fixed per language (instructions and worked examples, docs/ISSUES.md#prompt-prefix): a question
in English after one in Japanese shares ~20 tokens with it and reads the other ~700 again (~10 s
on two cores). `PrefixStates` decides, before each prompt, whether to keep the state the model holds
now and whether to restore a kept one:

- **keep** the current state when the new prompt would throw away most of it (their common
  start is shorter than `MIN_PREFIX` tokens) and no kept state already shares `MIN_PREFIX`
  tokens with it: it is the first of a family (a language's answer prompt, the extraction
  prompt). Saving happens only on such a switch, never after every answer (llama-cpp-python's
  own RAM cache saved after every answer: +1.4-1.6 s each, docs/ISSUES.md#prompt-prefix).
- **restore** the kept state sharing the longest start with the new prompt when that start is
  longer, by `MIN_PREFIX` tokens or more, than what the model holds now.

At most `MAX_STATES` are kept (the least recently used goes). The policy knows tokens only;
`storygraph.llm.llama_server` applies it to llama-cpp-python's model.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

MIN_PREFIX = 256
"""Tokens two prompts must share to count as one family: more than the chat template's own
start and a line of shared instructions (~20-40 tokens), less than a language's fixed answer
prefix (~700)."""
MAX_STATES = 4

State = TypeVar("State")


def common_start(a: Sequence[int], b: Sequence[int]) -> int:
    """How many leading tokens `a` and `b` share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


@dataclass
class Plan(Generic[State]):
    """What to do before reading a prompt: keep the current state first (`keep`), then restore
    `restore` (None: read on from the current state)."""

    keep: bool
    restore: State | None


@dataclass
class PrefixStates(Generic[State]):
    min_prefix: int = MIN_PREFIX
    max_states: int = MAX_STATES
    _kept: OrderedDict[tuple[int, ...], State] = field(default_factory=OrderedDict)

    def __len__(self) -> int:
        return len(self._kept)

    def _best(self, tokens: Sequence[int]) -> tuple[tuple[int, ...] | None, int]:
        best: tuple[int, ...] | None = None
        best_len = 0
        for key in self._kept:
            shared = common_start(key, tokens)
            if shared > best_len:
                best, best_len = key, shared
        return best, best_len

    def plan(self, prompt: Sequence[int], current: Sequence[int]) -> Plan[State]:
        """What to do before the model reads `prompt` while it holds `current`'s state."""
        held = common_start(current, prompt)
        keep = (
            len(current) >= self.min_prefix
            and held < self.min_prefix
            and self._best(current)[1] < self.min_prefix
        )
        key, shared = self._best(prompt)
        restore = None
        if key is not None and shared >= held + self.min_prefix:
            self._kept.move_to_end(key)
            restore = self._kept[key]
        return Plan(keep=keep, restore=restore)

    def keep(self, tokens: Sequence[int], state: State) -> None:
        """Keep `state`, the model's state after reading `tokens`."""
        self._kept[tuple(tokens)] = state
        while len(self._kept) > self.max_states:
            self._kept.popitem(last=False)
