"""The host profiles: schema rules, and seed-ct200 against the seed's measurements."""

from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from specops.sglang_releases.facts import LATEST, for_version
from specops.sim.faults import FaultName, FullDisk, parse_fault
from specops.sim.profiles import UnknownProfileError, builtin_profiles, load_profile
from specops.sim.profiles.schema import ConcurrencyCurve, MountSpec

# The seed's measurements, kept beside the profile they calibrate (sim/profiles/seed-ct200.yaml).
CALIBRATION = Path(__file__).resolve().parents[2] / "sim" / "profiles" / "calibration" / "seed-ct200.yaml"


@pytest.fixture(scope="module")
def calibration() -> dict:
    return yaml.safe_load(CALIBRATION.read_text())


def test_seed_profile_has_the_seed_host(calibration):
    seed = load_profile("seed-ct200")
    gpus = calibration["host"]["gpus"]
    assert seed.gpus.count == gpus["count"] == 8
    assert seed.gpus.model.startswith(gpus["model"])
    assert seed.gpus.interconnect == "pcie"
    root = seed.mount("/")
    assert (root.size_gib, root.used_gib) == (
        calibration["host"]["root_disk"]["size_gb"],
        calibration["host"]["root_disk"]["used_gb"],
    )
    assert seed.serving.target.repo_id == calibration["target_model"]


def test_seed_profile_reproduces_every_measured_autoregressive_point(calibration):
    seed = load_profile("seed-ct200")
    measured = calibration["autoregressive"]
    for name, cal in measured["configs"].items():
        config = seed.serving.config(name)
        assert config.provenance == "measured"
        for key in ("tp", "ep", "pp"):
            if key in cal:
                assert getattr(config, key) == cal[key], (name, key)
        if "cuda_graphs" in cal:
            assert config.cuda_graphs == cal["cuda_graphs"]
        curve = dict(zip(config.throughput.concurrency, config.throughput.tok_s, strict=False))
        for c, tok_s in zip(measured["concurrency"], cal["tok_s"], strict=False):
            if tok_s is not None:
                assert curve[c] == pytest.approx(tok_s, rel=0.05), (name, c)


def test_seed_dflash_matches_the_seed(calibration):
    seed = load_profile("seed-ct200")
    cal = calibration["dflash_on_ep4"]
    dflash = next(s for s in seed.serving.speculative if s.base == "ep4" and s.cuda_graphs)
    lo, hi = cal["acceptance_length_range"]
    assert all(lo <= a <= hi for a in dflash.accept_length.values())
    assert dict(zip(dflash.throughput.concurrency, dflash.throughput.tok_s, strict=False))[1] == pytest.approx(
        cal["tok_s_c1"], rel=0.05
    )
    ep4_peak = max(v for _, v in seed.serving.config("ep4").throughput.known_points())
    assert max(v for _, v in dflash.throughput.known_points()) < ep4_peak


@pytest.mark.parametrize("name", builtin_profiles())
def test_speculative_configs_obey_sglang_dflash_rules(name):
    profile = load_profile(name)
    release = for_version(profile.software.sglang or LATEST)
    for spec in profile.serving.speculative:
        base = profile.serving.config(spec.base)
        if spec.algorithm == "DFLASH":
            assert base.pp == 1, f"{spec.name}: SGLang refuses DFlash with PP"
            # DP attention: refused before 0.5.23, allowed there with --enable-dp-lm-head.
            assert not base.dp_attention or release.rule("dflash_dp_attention_needs_dp_lm_head") is not None, spec.name
        assert spec.cuda_graphs == base.cuda_graphs or not spec.cuda_graphs


@pytest.mark.parametrize("name", ["seed-ct200", "h200x8-nvlink"])
def test_profiles_run_the_newest_modelled_sglang(name):
    assert load_profile(name).software.sglang == LATEST


def test_own_profile_is_documented_as_modelled():
    h200 = load_profile("h200x8-nvlink")
    assert "modelled" in h200.provenance
    assert all(c.provenance == "modelled" for c in h200.serving.configs)
    assert all(s.provenance == "modelled" for s in h200.serving.speculative)
    assert h200.software.clis == ["hf"]  # huggingface_hub 2.x: no huggingface-cli at all


def test_clis_follow_the_huggingface_hub_version():
    seed = load_profile("seed-ct200")
    assert seed.software.clis == ["hf", "huggingface-cli"]
    old = seed.software.model_copy(update={"huggingface_hub": "0.30.2"})
    assert old.clis == ["huggingface-cli"]


def test_unknown_profile_says_what_exists():
    with pytest.raises(UnknownProfileError, match="seed-ct200"):
        load_profile("no-such-host")


def test_bad_profile_data_is_refused():
    with pytest.raises(ValidationError, match="used"):
        MountSpec(mount_point="/", device="/dev/sda", size_gib=10, used_gib=11)
    with pytest.raises(ValidationError, match="increasing"):
        ConcurrencyCurve(concurrency=[32, 1], tok_s=[1.0, 2.0])


def test_fault_specs_parse_and_refuse_nonsense():
    fault = parse_fault("full_disk:free_gib=2.5")
    assert fault == FullDisk(free_gib=2.5)
    assert parse_fault("cuda_graph_drafter:mode=collapse").mode == "collapse"
    assert parse_fault("broken_cli").name == FaultName.BROKEN_CLI
    with pytest.raises(ValidationError):
        parse_fault("no_such_fault")
    with pytest.raises(ValidationError):
        parse_fault("cuda_graph_drafter:mode=sometimes")
    with pytest.raises(ValueError, match="key=value"):
        parse_fault("full_disk:2")
