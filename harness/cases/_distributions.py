"""Which distribution installs an import package, where the names differ: read by ``new`` (a frame's project)
and by ``validate`` (a repro importing a module its pinned distribution does not provide)."""

from __future__ import annotations

# Module folder (site-packages/<folder>) -> the distributions that install it, usual one first; the report's
# own listing picks among them (opencv-python-headless over opencv-python when that is what it lists).
# Any other folder is taken as its own distribution name (huggingface_hub -> huggingface-hub).
DISTRIBUTIONS: dict[str, tuple[str, ...]] = {
    "PIL": ("pillow", "pillow-simd"),
    "sklearn": ("scikit-learn",),
    "skimage": ("scikit-image",),
    "yaml": ("pyyaml",),
    "cv2": ("opencv-python", "opencv-python-headless", "opencv-contrib-python", "opencv-contrib-python-headless"),
    "bs4": ("beautifulsoup4",),
    "attr": ("attrs",),
    "dateutil": ("python-dateutil",),
    "dotenv": ("python-dotenv",),
    "git": ("gitpython",),
    "jwt": ("pyjwt",),
    "google": ("protobuf", "google-auth", "google-api-core"),  # a namespace: the listing decides
    "lycoris": ("lycoris-lora",),
    "open_clip": ("open-clip-torch",),
    "pytorch_lightning": ("pytorch-lightning", "lightning"),
    "lightning_fabric": ("lightning-fabric", "lightning"),
    "faiss": ("faiss-cpu", "faiss-gpu"),
    "onnxruntime": ("onnxruntime", "onnxruntime-gpu"),
    "mmcv": ("mmcv", "mmcv-full"),
    "_pytest": ("pytest",),
    "pkg_resources": ("setuptools",),
    "torchgen": ("torch",),
    "mmseg": ("mmsegmentation",),
    "mmcls": ("mmcls",),
    "functorch": ("torch",),
    "ignite": ("pytorch-ignite",),  # PyPI's "ignite" is another project (Apache Ignite's client)
    # Projects whose import name is not their distribution's (PyPI's "nemo" and "whisper" are other projects)
    "nemo": ("nemo-toolkit",),
    "whisper": ("openai-whisper",),
    "cleanfid": ("clean-fid",),
    "llama_cpp": ("llama-cpp-python",),
    "fitz": ("pymupdf",),
    "docx": ("python-docx",),
    "scvi": ("scvi-tools",),  # the scverse project (its 0.x releases were "scvi" on PyPI)
}
# Distributions on PyPI named as one of the modules above that are other projects (PyPI's "nemo" is not NVIDIA's
# NeMo): a case pinning one of them for that module's code runs another project.
OTHER_PROJECTS: frozenset[str] = frozenset({"ignite", "nemo", "whisper"})
