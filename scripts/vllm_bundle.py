"""Pack vLLM for a GPU machine that has PyTorch but cannot reach PyPI (run here, where pip can).

Downloads the vLLM release built against the machine's torch, and the packages
vLLM imports that the machine lacks, unpacks them into one folder (what
``pip install --target`` would give, without compiling anything), and packs
that folder as a ``tar.xz`` split into parts small enough to carry one at a
time. On the machine::

    cat parts/vllm.tar.xz.* | xz -d | tar -x -C /tmp/site && export PYTHONPATH=/tmp/site

Left out: torch, torchvision and torchaudio (the machine's own), the FA2
kernel (Hopper and newer use FA3), DeepGEMM builds for other Pythons, and the
optional kernel and video packages vLLM imports only for the features that use
them (FlashInfer: prompter's vLLM engine turns its sampler off where it is
missing). Used on 2026-11-27 for vLLM 0.25.1 (pinned to torch 2.11.0) on an
H200 with Python 3.12: every module of vLLM's engine path imported.

::

    python scripts/vllm_bundle.py --vllm 0.25.1 --have have.txt --out /tmp/vllm-bundle
    # have.txt: the machine's `python3 -m pip list --format=freeze` (or one name a line)
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

PLATFORMS = ["manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_24_x86_64", "manylinux_2_17_x86_64"]
PLATFORMS += ["manylinux2014_x86_64", "manylinux_2_31_x86_64", "manylinux_2_26_x86_64", "manylinux1_x86_64"]
# The machine's own, or imported only by the features that need them (checked for vLLM 0.25.1).
SKIP = {
    "torch", "torchvision", "torchaudio", "torchcodec", "pynvvideocodec", "flashinfer-python", "flashinfer-cubin",
    "tilelang", "nvidia-cutlass-dsl", "quack-kernels", "tokenspeed-mla", "humming-kernels", "fastsafetensors",
    "instanttensor", "nvidia-cudnn-frontend", "numba", "ray", "triton",
}  # fmt: skip
# vLLM pins this one for FlashInfer (left out); xgrammar asks for a newer one, which it then gets.
DIRECT_SKIP = {"apache-tvm-ffi"}
# Installed files nobody imports on this path: a 190 MB kernel for pre-Hopper GPUs, other Pythons' builds.
DROP = [re.compile(r"vllm/vllm_flash_attn/_vllm_fa2_C\..*\.so"), re.compile(r"deep_gemm/_C\.cpython-3(?!12)\d+")]


def _name(requirement: str) -> str:
    return re.sub(r"[-_.]+", "-", re.split(r"[\s;<>=!~\[(]", requirement.strip(), maxsplit=1)[0]).lower()


def _pip_download(args: list[str], dest: Path, python: str) -> None:
    command = [sys.executable, "-m", "pip", "download", "-q", "--only-binary=:all:", "--python-version", python]
    command += ["--implementation", "cp", "-d", str(dest)]
    for platform in PLATFORMS:
        command += ["--platform", platform]
    subprocess.run(command + args, check=True)


def _requirements(wheel: Path, python: str) -> list[str]:
    """The wheel's ``Requires-Dist`` lines that apply on Linux x86-64 with *python* and no extra."""
    from packaging.markers import Marker

    with zipfile.ZipFile(wheel) as archive:
        meta = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        lines = archive.read(meta).decode().splitlines()
    env = {"python_version": python, "platform_machine": "x86_64", "platform_system": "Linux", "extra": ""}
    env |= {"sys_platform": "linux", "implementation_name": "cpython", "python_full_version": python + ".0"}
    wanted = []
    for line in lines:
        if not line.startswith("Requires-Dist: "):
            continue
        requirement, _, marker = line[len("Requires-Dist: ") :].partition(";")
        if not marker.strip() or Marker(marker.strip()).evaluate(env):
            wanted.append(requirement.strip())
    return wanted


def _wanted(name: str, seen: set[str]) -> bool:
    """Not had, not skipped, and not one of the CUDA libraries that come with the machine's torch."""
    return name not in seen and not name.startswith(("nvidia-", "cuda-"))


def _wheel_for(name: str, wheels: Path) -> Path | None:
    for wheel in wheels.glob("*.whl"):
        if _name(wheel.name.split("-")[0]) == name:
            return wheel
    return None


def build(vllm: str, have: set[str], out: Path, python: str, part_mib: int) -> list[Path]:
    """Download vLLM and, round by round, what it needs that *have* and :data:`SKIP` do not cover (no
    version solving: the newest release each requirement admits); unpack, pack and split."""
    wheels = out / "wheels"
    shutil.rmtree(out, ignore_errors=True)
    wheels.mkdir(parents=True)
    _pip_download(["--no-deps", f"vllm=={vllm}"], wheels, python)
    (vllm_wheel,) = wheels.glob("vllm-*.whl")
    seen = {"vllm"} | have | SKIP
    todo = [r for r in _requirements(vllm_wheel, python) if _wanted(_name(r), seen | DIRECT_SKIP)]
    while todo:
        round_ = {}
        for requirement in todo:
            round_.setdefault(_name(requirement), requirement)
        seen |= set(round_)
        _pip_download(["--no-deps", *round_.values()], wheels, python)
        todo = []
        for name in round_:
            wheel = _wheel_for(name, wheels)
            if wheel is None:
                raise SystemExit(f"pip downloaded no wheel for {name}")
            todo += [r for r in _requirements(wheel, python) if _wanted(_name(r), seen)]
    site = out / "site"
    for wheel in sorted(wheels.glob("*.whl")):
        with zipfile.ZipFile(wheel) as archive:
            for member in archive.namelist():
                if not any(p.search(member) for p in DROP):
                    archive.extract(member, site)
    packed = out / "vllm.tar.xz"
    with packed.open("wb") as sink:
        tar = subprocess.Popen(["tar", "-C", str(site), "-cf", "-", "."], stdout=subprocess.PIPE)
        subprocess.run(["xz", "-T0", "-6"], stdin=tar.stdout, stdout=sink, check=True)
        tar.wait()
    parts = out / "parts"
    parts.mkdir()
    subprocess.run(["split", "-b", f"{part_mib}m", "-d", str(packed), str(parts / "vllm.tar.xz.")], check=True)
    packed.unlink()
    return sorted(parts.iterdir())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vllm", required=True, help="the release built against the machine's torch")
    parser.add_argument("--have", required=True, help="the machine's installed packages, one a line")
    parser.add_argument("--out", required=True)
    parser.add_argument("--python", default="3.12", help="the machine's Python (major.minor)")
    parser.add_argument("--part-mib", type=int, default=52)
    args = parser.parse_args(argv)
    have = {_name(line) for line in Path(args.have).read_text().splitlines() if line.strip()}
    for part in build(args.vllm, have, Path(args.out), args.python, args.part_mib):
        print(part, part.stat().st_size // 2**20, "MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
