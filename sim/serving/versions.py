"""What changed in which SGLang version: the facts the simulator switches on.

The simulated host reports an SGLang version (WorldState.sglang_version); the
simulator behaves like that release. Each threshold below names the change it
stands for and where it was seen.
"""

from __future__ import annotations

from ..profiles.schema import version_tuple

Version = tuple[int, ...]

# DFLASH (PR sgl-project/sglang#22077, merged 2026-04-07, the day after the v0.5.10
# tag; its predecessor #16818 was open since January). Strictly, the first tag with it
# is 0.5.11, but the seed host ran DFlash on an SGLang reporting 0.5.10 (a main build
# of that week), so the simulator accepts it from 0.5.10 on. 0.5.2 (the OldSglang
# fault) rejects it as argparse does.
DFLASH_SINCE: Version = (0, 5, 10)
# --speculative-algorithm STANDALONE (small draft model) and NGRAM (renamed from LOOKAHEAD).
STANDALONE_SINCE: Version = (0, 5, 2)
NGRAM_SINCE: Version = (0, 5, 4)
# DSPARK and UNO appear in the choices of recent trees; the release is unconfirmed.
DSPARK_UNO_SINCE: Version = (0, 5, 13)
# HTTP port bound before model loading, failing fast when taken (PR #17754, merged
# 2026-01-26, first in v0.5.9 of 2026-02-24). Before it, uvicorn failed to bind only
# after the model had loaded.
PORT_PREBIND_SINCE: Version = (0, 5, 9)
# `Decode batch, ... accept len: A, accept rate: R, ...` (newer) vs `Decode batch. ...
# accept len: A, ...` (older). The exact release of the change is unconfirmed.
DECODE_LOG_ACCEPT_RATE_SINCE: Version = (0, 5, 5)
# `/server_info` beside `/get_server_info`; per-request `spec_num_correct_drafts` and
# friends replacing `spec_accept_token_num`/`spec_draft_token_num` (release unconfirmed).
SERVER_INFO_ALIAS_SINCE: Version = (0, 5, 5)
SPEC_DRAFT_METRICS_SINCE: Version = (0, 5, 5)


def parse_version(version: str | None) -> Version:
    """`0.5.10.post1` -> (0, 5, 10); None (not installed) -> (0,)."""
    if not version:
        return (0,)
    return version_tuple(version)


def at_least(version: Version, since: Version) -> bool:
    return version >= since
