"""Real containers from a real (tiny) image: isolation, limits, timeout, interrupt, cleanup, GPU request."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.docker


def test_build_applies_patches_and_labels_the_image(docker_client, tiny_build):
    plan, result, lines = tiny_build
    assert result.image.tag == plan.tag and result.image.id.startswith("sha256:")
    # (the build log names the patch only when the layer is not cached; the container check below proves it)
    labels = docker_client.images.get(plan.tag).labels
    assert labels["repro-matrix.requires"] == '["six==1.17.0"]'
    assert labels["repro-matrix.base"] == plan.base
    # The stage holding the wheelhouse is gone; only the final image remains.
    assert not [line for line in lines if line.startswith("new dangling image")]
    output = docker_client.containers.run(plan.tag, ["python", "-c", "import six; print(six.REPRO_MATRIX_PATCHED)"],
                                          network_mode="none", remove=True)
    assert output.strip() == b"True"
    assert result.size_bytes > 0
    # REPRO_DOCKER_LABELS (the test session sets one, to remove what it built at its end)
    from harness.docker._build import extra_labels

    assert extra_labels().items() <= labels.items()


def test_extra_labels_from_the_environment(monkeypatch):
    from harness._exceptions import UsageError
    from harness.docker._build import extra_labels

    monkeypatch.setenv("REPRO_DOCKER_LABELS", "ci.job=1234, team=ml,")
    assert extra_labels() == {"ci.job": "1234", "team": "ml"}
    monkeypatch.setenv("REPRO_DOCKER_LABELS", "no-value")
    with pytest.raises(UsageError, match="REPRO_DOCKER_LABELS: 'no-value' is not key=value"):
        extra_labels()


def test_sdk_legacy_build_removes_its_build_stage(docker_client, tiny_settings, tiny_spec, tmp_path, dangling_ids):
    from dataclasses import replace

    from harness.docker import build_image, plan_image

    plan = plan_image(tiny_spec, "cpu", settings=replace(tiny_settings, builder="sdk"))
    before = dangling_ids()
    lines: list[str] = []
    result = build_image(docker_client, plan, log_path=tmp_path / "sdk.log", say=lines.append)
    assert any("builder SDK (legacy)" in line for line in lines)
    assert any(line.startswith("Step ") for line in lines)
    assert dangling_ids() - before == set()  # neither the wheelhouse stage nor the replaced image is left
    output = docker_client.containers.run(result.image.id, ["python", "-c", "import six; print(six.REPRO_MATRIX_PATCHED)"],
                                          network_mode="none", remove=True)
    assert output.strip() == b"True"


def test_buildkit_build_drops_the_build_cache_it_added(docker_client, tiny_settings, tmp_path):
    """The build stage (wheelhouse + /venv) stays in BuildKit's cache unless the build drops it; the image
    still runs after the drop."""
    import uuid
    from dataclasses import replace

    from harness._exceptions import EnvBuildError
    from harness.cases._load import PatchFile
    from harness.docker import build_image, plan_image
    from harness.docker._buildkit import buildkit_cli
    from harness.environments._spec import EnvSpec

    try:
        buildkit_cli()
    except EnvBuildError as error:  # no CLI with BuildKit here
        pytest.skip(str(error))
    marker = f"M{uuid.uuid4().hex}"  # a patch no earlier build had: its layers are new, not cache hits
    patch = tmp_path / "marker.diff"
    patch.write_text((Path(__file__).with_name("data") / "six-marker.diff").read_text()
                     .replace("REPRO_MATRIX_PATCHED = True", f"REPRO_MATRIX_PATCHED = {marker!r}"))
    plan = plan_image(EnvSpec(requires=("six==1.17.0",), patches=(PatchFile.from_path(patch),)), "cpu",
                      settings=replace(tiny_settings, builder="buildkit"))
    lines: list[str] = []
    result = build_image(docker_client, plan, log_path=tmp_path / "bk.log", say=lines.append)
    try:
        assert result.dropped_cache_bytes > 0, lines
        assert any(line.startswith("dropped ") and "of build cache this build added" in line for line in lines)
        output = docker_client.containers.run(plan.tag, ["python", "-c", "import six; print(six.REPRO_MATRIX_PATCHED)"],
                                              network_mode="none", remove=True)
        assert output.strip() == marker.encode()
    finally:
        docker_client.images.remove(plan.tag)


def test_prepare_reports_the_image_and_installed_packages(backend, tiny_spec, tiny_build, docker_client):
    plan, _, _ = tiny_build
    env = backend.prepare(tiny_spec, progress=lambda text: None)
    assert env.image is not None and env.image["tag"] == plan.tag
    assert env.installed.get("six") == "1.17.0"
    # The host-compatibility step ran (its record is there) and found nothing to fix: no torchvision.
    record = docker_client.containers.run(plan.tag, ["cat", "/venv/repro-matrix-compat.json"], network_mode="none",
                                          remove=True)
    assert record.decode().strip() == '{"compat": []}'
    assert env.compat == ()
    assert env.id == f"docker-{tiny_spec.key()}"


def test_cell_runs_isolated(backend, tiny_spec, cell_request):
    env = backend.prepare(tiny_spec, progress=lambda text: None)
    request = cell_request("""
        import os, sys
        from pathlib import Path
        import six
        assert six.REPRO_MATRIX_PATCHED
        assert sorted(os.listdir("/sys/class/net")) == ["lo"], os.listdir("/sys/class/net")
        for target in (Path(__file__).parent / "x", Path("/venv/x"), Path("/repro/harness/x")):
            try:
                target.write_text("no")
            except OSError as error:
                print("read-only:", target, error.errno)
            else:
                raise SystemExit(f"{target} is writable")
        Path("written-by-cell.txt").write_text("ok")
        Path("/tmp/scratch").write_text("ok")
        print("argv", sys.argv[1:], "cwd", os.getcwd(), "env", os.environ["MY_VAR"])
        print("to stderr", file=sys.stderr)
    """, env={"MY_VAR": "from-case"})
    outcome = backend.run_cell(env, request)
    log = request.log_path.read_text()
    assert outcome.status == "passed", (outcome, log)
    assert (request.cell_dir / "written-by-cell.txt").read_text() == "ok"
    assert log.startswith("# header\n")
    assert log.count("read-only:") == 3 and "30" in log  # errno 30: EROFS
    assert "argv ['--variant', 'v', '--device', 'cpu'] cwd /repro/cell env from-case" in log
    assert "to stderr" in log
    assert outcome.image and outcome.image["tag"] == env.image["tag"]
    assert outcome.imported.get("six") == "1.17.0"


def test_extension_cache_persists_between_cells_of_an_image(backend, tiny_spec, cell_request, tmp_path):
    env = backend.prepare(tiny_spec, progress=lambda text: None)
    script = """
        import os, sys
        from pathlib import Path
        cache = Path(os.environ["TORCH_EXTENSIONS_DIR"])
        cache.mkdir(parents=True, exist_ok=True)
        marker = cache / "marker"
        print("found" if marker.exists() else "fresh", marker)
        marker.write_text("compiled")
    """
    first = cell_request(script)
    assert backend.run_cell(env, first).status == "passed", first.log_path.read_text()
    second = cell_request(script)
    assert backend.run_cell(env, second).status == "passed", second.log_path.read_text()
    assert "found /cache/torch_extensions/marker" in second.log_path.read_text()


@pytest.mark.parametrize(("script", "status", "detail"), [
    ("raise RuntimeError('Expected all tensors to be on the same device')", "raised", "RuntimeError"),
    ("import sys; sys.exit(3)", "exited", 3),
    ("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)", "crashed", "SIGSEGV"),
    # A repro that dies of SIGTERM by itself is its own result, not a container stopped from outside.
    ("import os, signal; os.kill(os.getpid(), signal.SIGTERM)", "crashed", "SIGTERM"),
])
def test_cell_results_match_the_venv_backend_statuses(backend, tiny_spec, cell_request, script, status, detail):
    env = backend.prepare(tiny_spec, progress=lambda text: None)
    outcome = backend.run_cell(env, cell_request(script))
    assert outcome.status == status, outcome
    if status == "raised":
        assert outcome.exception["type"] == detail
    elif status == "exited":
        assert outcome.exit_code == detail
    else:
        assert outcome.signal == detail


# Waits end on what they wait for; these bounds only stop a hung test, however loaded the machine.
HANG_GUARD_S = 600


def start_cell(backend, env, request, containers_of) -> tuple[threading.Thread, list]:
    """Run the cell in a thread; return once its repro has printed 'running' (its log is streamed from the
    container as it runs). The outcome lands in the list."""
    results: list = []
    worker = threading.Thread(target=lambda: results.append(backend.run_cell(env, request)))
    worker.start()
    deadline = time.monotonic() + HANG_GUARD_S
    while "running" not in request.log_path.read_text(encoding="utf-8", errors="replace"):
        assert worker.is_alive(), f"the cell ended before its repro ran: {results}"
        assert time.monotonic() < deadline, "the cell's repro never ran"
        time.sleep(0.2)
    return worker, results


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGKILL"])
def test_container_stopped_from_outside_is_an_infra_error(backend, tiny_spec, cell_request, containers_of, sig):
    """'docker kill' (or dockerd stopping its containers as it shuts down) is not the repro's result."""
    env = backend.prepare(tiny_spec, progress=lambda text: None)
    request = cell_request("import time\nprint('running', flush=True)\ntime.sleep(600)", timeout=300)
    worker, results = start_cell(backend, env, request, containers_of)
    (container,) = containers_of(backend.runner.run_id)
    backend.client.api.kill(container.id, signal=sig)
    worker.join(timeout=HANG_GUARD_S)
    assert results and results[0].status == "infra-error", results
    assert f"stopped from outside the harness (the Docker daemon sent {sig}" in results[0].reason
    assert containers_of(backend.runner.run_id) == []


def test_memory_limit_kills_with_oom(backend, tiny_spec, cell_request):
    env = backend.prepare(tiny_spec, progress=lambda text: None)
    outcome = backend.run_cell(env, cell_request("block = bytearray(2 * 1024**3)\nprint(len(block))"))
    assert outcome.status == "oom", outcome
    assert "memory limit" in outcome.reason


def test_timeout_kills_and_removes_the_container(backend, tiny_spec, cell_request, containers_of):
    env = backend.prepare(tiny_spec, progress=lambda text: None)
    # 8 s: time for a loaded machine to start the container's Python; the repro would sleep 600 s.
    request = cell_request("import time\nprint('sleeping', flush=True)\ntime.sleep(600)", timeout=8)
    seen: list[list] = []
    done = threading.Event()

    def watch() -> None:  # the containers while the repro sleeps (once it has said so)
        while "sleeping" not in request.log_path.read_text(encoding="utf-8", errors="replace"):
            if done.wait(0.1):
                return
        seen.append(containers_of(backend.runner.run_id))

    watcher = threading.Thread(target=watch)
    watcher.start()
    started = time.monotonic()
    try:
        outcome = backend.run_cell(env, request)
    finally:
        done.set()
        watcher.join()
    assert outcome.status == "timeout", outcome
    assert time.monotonic() - started < 300, "the run waited for the repro, not for its timeout"
    assert "killed and removed" in outcome.reason
    assert seen and len(seen[0]) == 1  # labelled with the run id while it ran
    assert containers_of(backend.runner.run_id) == []
    assert "sleeping" in request.log_path.read_text()


def test_cancel_interrupts_running_cells_and_leaves_nothing(backend, tiny_spec, cell_request, containers_of):
    env = backend.prepare(tiny_spec, progress=lambda text: None)
    request = cell_request("import time\nprint('running', flush=True)\ntime.sleep(600)", timeout=300)
    worker, results = start_cell(backend, env, request, containers_of)
    backend.cancel()
    worker.join(timeout=HANG_GUARD_S)
    assert results and results[0].status == "interrupted", results
    assert containers_of(backend.runner.run_id) == []


def test_leftovers_of_a_dead_run_are_swept(docker_client, tiny_build, containers_of):
    import socket

    from harness.docker import remove_leftovers

    plan, _, _ = tiny_build
    dead_pid = "999999999"
    container = docker_client.containers.create(
        plan.tag, ["sleep", "600"], network_mode="none",
        labels={"repro-matrix.run": "test-dead-run", "repro-matrix.pid": dead_pid,
                "repro-matrix.host": socket.gethostname()})
    removed = remove_leftovers(docker_client)
    assert container.name in removed
    assert containers_of("test-dead-run") == []


def test_gpu_request_without_gpu_runtime_skips_the_cell(backend, docker_client, tiny_spec, tiny_cuda_image,
                                                         cell_request, containers_of):
    if "nvidia" in docker_client.info().get("Runtimes", {}):
        pytest.skip("this daemon has the NVIDIA runtime")
    env = backend.prepare(tiny_spec, progress=lambda text: None)
    outcome = backend.run_cell(env, cell_request("print('never runs')", gpu=True))
    assert outcome.status == "skipped", outcome
    assert "NVIDIA Container Toolkit" in outcome.reason and "could not select device driver" in outcome.reason
    assert outcome.image and outcome.image["tag"] == tiny_cuda_image.tag
    # The failed start leaves a 'created' container behind in Docker; the backend must remove it.
    assert containers_of(backend.runner.run_id) == []
    ok, reason = backend.cuda_status(env)
    assert not ok and "NVIDIA Container Toolkit" in reason


def test_gpu_device_request_shape():
    from harness.docker._client import gpu_device_requests, is_gpu_runtime_error

    (request,) = gpu_device_requests()
    assert dict(request) == {"Driver": "", "Count": -1, "DeviceIDs": [], "Capabilities": [["gpu"]], "Options": {}}
    assert is_gpu_runtime_error(RuntimeError(
        '500 Server Error: Internal Server Error ("could not select device driver "" with capabilities: [[gpu]]")'))
    assert not is_gpu_runtime_error(RuntimeError("No such image"))


def test_clean_removes_images_no_case_uses(docker_client, tiny_settings, tmp_path):
    from harness.cases._load import load_cases
    from harness.docker import build_image, clean_images, plan_image
    from harness.docker._client import find_image
    from harness.environments._clean import human_size
    from harness.environments._spec import EnvSpec

    # Its own image folder, so the sweep cannot touch the images other tests (or CI) built.
    shutil.copytree(Path(__file__).resolve().parents[2] / "images" / "torch", tmp_path / "cleantest")
    plan = plan_image(EnvSpec(requires=("six==1.16.0",)), "cpu", settings=tiny_settings,
                      image_dir=tmp_path / "cleantest")
    build_image(docker_client, plan, log_path=tmp_path / "unused.log", say=lambda text: None)
    cases = load_cases([Path(__file__).resolve().parents[1] / "fixtures" / "cases"]).cases
    said: list[str] = []
    clean_images(cases, dry_run=True, say=said.append, repository=plan.repository)
    size = docker_client.images.get(plan.tag).attrs["Size"]
    assert said == [f"would remove image {plan.tag} ({human_size(size)})"]
    assert find_image(docker_client, plan.tag) is not None
    removed = clean_images(cases, dry_run=False, say=said.append, repository=plan.repository)
    assert f"removing image {plan.tag} ({human_size(size)})" in said and find_image(docker_client, plan.tag) is None
    assert (removed.count, removed.size_bytes) == (1, size)


def test_listing_survives_containers_removed_meanwhile(docker_client, tiny_build):
    """Another run creating and removing containers while this one sweeps must not break the sweep.

    The SDK's ``containers.list`` inspects each listed container in a second call and raised NotFound
    here in about 7 of 100 listings; a run starting next to another one crashed on it.
    """
    import os
    import socket

    from harness.docker import labelled_containers, remove_leftovers

    plan, _, _ = tiny_build
    labels = {"repro-matrix.run": "test-churn", "repro-matrix.pid": str(os.getpid()),
              "repro-matrix.host": socket.gethostname(), "repro-matrix.cell": "churn"}
    stop = threading.Event()
    churned = []

    def churn() -> None:
        while not stop.is_set():
            container = docker_client.containers.create(plan.tag, ["true"], network_mode="none", labels=labels)
            container.remove(force=True)
            churned.append(container.id)

    worker = threading.Thread(target=churn)
    worker.start()
    deadline = time.monotonic() + 120
    listings = 0
    try:
        while len(churned) < 40 and time.monotonic() < deadline:
            assert "churn" not in remove_leftovers(docker_client)  # alive owner: never swept
            labelled_containers(docker_client)
            listings += 2
    finally:
        stop.set()
        worker.join()
    assert len(churned) >= 40 and listings >= 40, (len(churned), listings)
