"""Generated goals and host specs thrown at the parsers: never a traceback, never a repo id the text does not say.

Over 12,000 goals and 10,000 host specs (derandomized, so CI sees the same ones each time). A parser either
answers with what the text says, or refuses with its typed error: one line, naming the offending character
where one is to blame.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specops.agent.goal import GoalRefused, parse_goal
from specops.tools.hosts import HostError, parse_host_spec
from specops.tools.hosts.spec import KindSpec, LocalSpec, SshSpec
from specops.tools.inputs import describe_char

pytestmark = [pytest.mark.filterwarnings("ignore::hypothesis.errors.NonInteractiveExampleWarning"), pytest.mark.slow]

# What the parsers are thrown: the characters of repo ids and of prose, and every kind a reviewer tried to
# slip through (shell metacharacters, control characters, line separators, invisible and non-ASCII ones).
REPO_CHARS = "abcXYZ0189._-"
SHELL = list(";&|$`<>(){}[]*?!\\'\"#~")
CONTROL = ["\n", "\r", "\x00", "\x1b", "\x07", "\x7f", "\x85", "\u2028", "\u2029", "\u200b", "\u202e", "\ufeff", "\x0b"]
OTHER = [" ", "\t", ".", ",", ":", "/", "@", "=", "+", "%", "^", "é", "Ж", "\u00a0", "\u3000", "ﬁ", "a\u0301", "😀"]
GLUE = st.sampled_from(SHELL + CONTROL + OTHER)
WORDS = st.sampled_from(
    ["deploy", "benchmark", "evaluate", "compare", "then", "at", "64", "tok/s", "and/or", "--", "the", "drafter", ""]
)
HUB = st.sampled_from(
    [
        "https://huggingface.co/",
        "https://hf.co/",
        "http://www.huggingface.co/models/",
        "HTTPS://HF.CO/",
        "https://huggingface.co/datasets/",
    ]
)

_part = st.text(alphabet=REPO_CHARS, min_size=0, max_size=12)
_repo_like = st.builds(lambda a, b: f"{a}/{b}", _part, _part)
_token = st.one_of(
    _repo_like,
    st.builds(lambda hub, repo, tail: hub + repo + tail, HUB, _repo_like, st.sampled_from(["", "/tree/main", "/"])),
    st.text(alphabet=REPO_CHARS + "/", max_size=10),
)
# A goal: words and repo-like tokens with characters glued before, between and after them.
_piece = st.one_of(
    WORDS, _token, GLUE, st.builds(lambda g, t: g + t, GLUE, _token), st.builds(str.__add__, _token, GLUE)
)
GOALS = st.one_of(
    st.lists(_piece, max_size=8).map(" ".join),
    st.lists(_piece, max_size=8).map("".join),
    st.text(max_size=60),  # anything at all, from the whole of Unicode
    st.text(alphabet=REPO_CHARS + "/ " + "".join(SHELL) + "".join(CONTROL), max_size=40),
)

_OPENING = "(['\""
_CLOSING = ".,:!?)]'\""
_HUB_PREFIX = re.compile(r"https?://(?:www\.)?(?:huggingface\.co|hf\.co)/(?:models/)?$", re.IGNORECASE)
_URL_REST = re.compile(r"/[A-Za-z0-9._/+@%=~-]*")


def _starts_clean(text: str, index: int) -> bool:
    while index > 0 and text[index - 1] in _OPENING:
        index -= 1
    return index == 0 or text[index - 1].isspace()


def _ends_clean(text: str, index: int, in_url: bool) -> bool:
    if in_url and index < len(text) and text[index] == "/":
        rest = _URL_REST.match(text, index)
        assert rest is not None
        index = rest.end()
    while index < len(text) and text[index] in _CLOSING:
        index += 1
    return index == len(text) or text[index].isspace()


def said_cleanly(text: str, repo: str) -> bool:
    """Whether `repo` stands in `text` as written: alone between spaces (quotes, brackets and a closing period
    allowed), or as the ORG/NAME of a Hub URL standing so."""
    for found in re.finditer(re.escape(repo), text):
        start, end = found.span()
        hub = _HUB_PREFIX.search(text[:start])
        if hub is not None and _starts_clean(text, hub.start()) and _ends_clean(text, end, in_url=True):
            return True
        if hub is None and _starts_clean(text, start) and _ends_clean(text, end, in_url=False):
            return True
    return False


def assert_one_line_naming(message: str, char: str | None, text: str) -> None:
    assert message and len(message.splitlines()) == 1 and "\n" not in message, repr(message)
    if char is not None:
        assert char in text, (char, text)
        assert describe_char(char) in message, (char, message)


def check_goal(text: str) -> None:
    try:
        goal = parse_goal(text)
    except GoalRefused as refused:
        assert_one_line_naming(str(refused), refused.char, text)
        return
    # A goal naming no repo is a hint (a model is given it; the playbook searches or says what is missing).
    assert goal.repo_id is None or said_cleanly(text, goal.repo_id), (text, goal.repo_id)
    assert not any(c in text for c in CONTROL), (text, goal.repo_id)  # a goal with a control character is refused


QUICK = settings(derandomize=True, deadline=None, suppress_health_check=list(HealthCheck), database=None)


def test_generated_goals():
    """Goals of every shape, several to an example (hypothesis' own cost per example is most of the time)."""
    seen: list[str] = []

    @settings(QUICK, max_examples=1500)
    @given(st.lists(GOALS, min_size=5, max_size=5))
    def throw(goals: list[str]) -> None:
        seen.extend(goals)
        for text in goals:
            check_goal(text)

    throw()
    assert len(seen) >= 7500


def test_a_repo_id_glued_to_anything_is_refused_or_said_cleanly():
    seen: list[str] = []

    @settings(QUICK, max_examples=625)
    @given(
        st.lists(
            st.builds(lambda a, repo, glue, b: f"{a} {repo}{glue}{b}", WORDS, _token, GLUE, WORDS),
            min_size=4,
            max_size=4,
        )
    )
    def throw(goals: list[str]) -> None:
        seen.extend(goals)
        for text in goals:
            check_goal(text)

    throw()
    assert len(seen) >= 2500


_REPO_PART = r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,10}[A-Za-z0-9])?"
VALID_REPOS = st.from_regex(rf"{_REPO_PART}/{_REPO_PART}", fullmatch=True).filter(
    lambda repo: "--" not in repo and ".." not in repo and repo.lower() not in {"tok/s", "and/or", "i/o", "w/o"}
)
_CLEAN_GOALS = st.builds(
    lambda before, opener, url, repo, tail, closer, after: (
        f"{before} {opener}{url}{repo}{tail if url else ''}{closer} {after}",
        repo,
    ),
    WORDS,
    st.sampled_from(["", "(", '"', "'", "('"]),
    st.sampled_from(["", "", "https://huggingface.co/", "https://hf.co/models/"]),
    VALID_REPOS,
    st.sampled_from(["", "/tree/main", "/blob/main/config.json", "/"]),
    st.sampled_from(["", ".", ",", ":", ")", '".', "'", "!", "?", ").", "..."]),
    WORDS,
)


def test_a_valid_repo_id_written_cleanly_is_always_taken_as_written():
    """The other side of refusing: a real repo id standing alone (quoted, bracketed, ending a sentence, in a Hub
    URL) is never refused and never changed."""
    seen: list[str] = []

    @settings(QUICK, max_examples=500)
    @given(st.lists(_CLEAN_GOALS, min_size=4, max_size=4))
    def throw(goals: list[tuple[str, str]]) -> None:
        for text, repo in goals:
            seen.append(text)
            assert parse_goal(text).repo_id == repo, text

    throw()
    assert len(seen) >= 2000


# --- host specs -----------------------------------------------------------------------------------------------------

_host_part = st.text(alphabet="abcXYZ019.-_", max_size=8)
_SCHEMES = st.sampled_from(["ssh://", "SSH://", "sim:", "sim:/", "", "", "ftp://", "ssh:/", "ssh:///", "local", "gpu-"])
_spec_piece = st.one_of(
    _host_part,
    GLUE,
    st.sampled_from(["@", ":", "/", "[", "]", "::1", "22", "0", "65536", "99999", "root", "tmp", "a-b"]),
    st.integers(min_value=-5, max_value=70000).map(str),
)
HOST_SPECS = st.one_of(
    st.builds(lambda scheme, rest: scheme + "".join(rest), _SCHEMES, st.lists(_spec_piece, max_size=6)),
    st.builds(
        lambda user, host, port, glue: f"ssh://{user}{host}{port}{glue}",
        st.sampled_from(["", "root@", "ubuntu@", "@", "a:b@"]),
        _host_part,
        st.sampled_from(["", ":22", ":2222", ":0", ":", ":65535", ":65536", ":x"]),
        st.one_of(st.just(""), GLUE),
    ),
    st.sampled_from(["gpu-a", "gpu-short", "gpu-bad", "gpu-c", "gpu-z", "local", "sim:/tmp/world"]).flatmap(
        lambda name: st.builds(lambda glue, after: name + glue if after else glue + name, GLUE, st.booleans())
    ),
    st.text(max_size=30),
)
_SSH_URL = re.compile(
    r"ssh://(?:(?P<user>[^@/]*)@)?(?P<host>\[[^\]]*\]|[^:/@\[\]]*)(?::(?P<port>[0-9]*))?/?", re.IGNORECASE
)


def check_host_spec(spec: str, inventory, ssh_config) -> None:
    import getpass

    try:
        parsed = parse_host_spec(spec, inventory=inventory, ssh_config=ssh_config)
    except HostError as refused:
        assert_one_line_naming(str(refused), getattr(refused, "char", None), spec)
        return
    assert not any(c.isspace() or c in CONTROL for c in spec), (spec, parsed)
    if isinstance(parsed, LocalSpec):
        assert spec == "local"
    elif isinstance(parsed, KindSpec):
        assert spec.startswith("sim:/") and parsed.spec == spec, (spec, parsed)
    else:
        assert isinstance(parsed, SshSpec) and parsed.spec == spec
        if "://" not in spec:
            assert spec in ("gpu-a", "gpu-short", "gpu-c"), spec  # a name the inventory or ssh config defines
            return
        said = _SSH_URL.fullmatch(spec)
        assert said is not None, (spec, parsed)  # nothing in the spec beyond ssh://user@host:port
        target = parsed.target
        assert said["host"].strip("[]").lower() == target.hostname.lower(), (spec, target)
        assert target.user == (said["user"] if said["user"] is not None else getpass.getuser()), (spec, target)
        assert target.port == (int(said["port"]) if said["port"] else 22), (spec, target)


@pytest.fixture
def host_files(tmp_path):
    inventory = tmp_path / "hosts.yaml"
    inventory.write_text(
        "gpu-a:\n  url: ssh://root@10.1.1.1:2200\ngpu-short: ssh://admin@10.1.1.2\ngpu-bad:\n  url: ssh://r@h\n  colour: 1\n"
    )
    config = tmp_path / "ssh_config"
    config.write_text("Host gpu-c\n  HostName 10.2.2.2\n  User ops\n  Port 2022\nHost *\n  User everyone\n")
    return inventory, config


def test_generated_host_specs(host_files):
    seen: list[str] = []

    @settings(QUICK, max_examples=2000)
    @given(st.lists(HOST_SPECS, min_size=5, max_size=5))
    def throw(specs: list[str]) -> None:
        seen.extend(specs)
        for spec in specs:
            check_host_spec(spec, *host_files)

    throw()
    assert len(seen) >= 10_000
