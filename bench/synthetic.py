"""Synthetic, valid entries for the benchmarks: N files shaped like the real ones.

The text is generated, but each entry has the real structure and realistic sizes
(about 6 KB, several causes and symptoms, literal and regex signatures, links to
other entries), so the loader, the renderer and the matcher do the same work per
entry as on the shipped corpus.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
WORDS = (
    "allocator gradient rank collective kernel tensor buffer stream shard optimizer checkpoint worker "
    "bucket prefetch partition activation scheduler throughput latency overflow fragment device host "
    "process launcher driver runtime compiler graph guard dtype precision batch sequence layer expert"
).split()
COMPONENTS = ["ProcessGroupNCCL", "CUDACachingAllocator", "DataLoader", "ZeroOptimizer", "GradScaler",
              "TorchDynamo", "XlaRuntime", "CublasHandle", "ElasticAgent", "StateDictLoader"]


def sentence(rng: random.Random, words: int = 14) -> str:
    chosen = [rng.choice(WORDS) for _ in range(words)]
    return " ".join(chosen).capitalize() + "."


def paragraph(rng: random.Random, sentences: int = 5) -> str:
    return " ".join(sentence(rng, rng.randint(9, 18)) for _ in range(sentences))


def signatures(rng: random.Random, index: int) -> list[dict]:
    component = COMPONENTS[index % len(COMPONENTS)]
    code = f"E{index:05d}"
    lost = rng.choice(WORDS)
    return [
        {"literal": f"{component} failure {code}: {rng.choice(WORDS)} {rng.choice(WORDS)} exhausted"},
        {
            "regex": rf"{component}Error\({code}\): rank [0-9]+ lost {lost} after [0-9.]+ ms",
            "examples": [f"[rank3]: {component}Error({code}): rank 3 lost {lost} after 12.5 ms"],
        },
        {
            "regex": rf"{rng.choice(WORDS)}_{index} (?:timed out|failed) on device cuda:[0-9]+",
            "examples": [],
        },
    ]


def make_entry(index: int, total: int, taxonomy: dict, rng: random.Random) -> dict:
    categories = sorted(taxonomy["categories"])
    tags = sorted(taxonomy["tags"])
    sigs = signatures(rng, index)
    sigs[2]["examples"] = [sigs[2]["regex"].split(" (?:")[0] + " timed out on device cuda:1"]
    others = [other for other in rng.sample(range(total), min(3, total)) if other != index][:2]
    return {
        "id": f"synthetic-{index:05d}",
        "title": f"Synthetic failure {index}: {rng.choice(WORDS)} {rng.choice(WORDS)} in {rng.choice(COMPONENTS)}",
        "summary": paragraph(rng, 2),
        "category": categories[index % len(categories)],
        "severity": rng.choice(["low", "medium", "high", "critical"]),
        "tags": rng.sample(tags, 3),
        "description": paragraph(rng, 4),
        "mechanism": paragraph(rng, 8) + "\n\n" + paragraph(rng, 6),
        "causes": [{"id": f"cause-{n}", "text": sentence(rng, 16)} for n in range(3)],
        "observations": [sentence(rng) for _ in range(3)],
        "symptoms": [{"symptom": sentence(rng), "cause": f"cause-{n % 3}"} for n in range(4)],
        "signatures": sigs,
        "affected": [f"{rng.choice(COMPONENTS)} {rng.randint(1, 3)}.{rng.randint(0, 9)}" for _ in range(2)],
        "confirm": [sentence(rng) for _ in range(4)],
        "fix": {
            "summary": sentence(rng),
            "steps": [sentence(rng) for _ in range(3)],
            "code": [{"label": "PyTorch", "language": "python",
                      "source": f"import torch\n\nconfig = {{'{rng.choice(WORDS)}': {rng.randint(1, 64)}}}\n"}],
            "tradeoff": sentence(rng),
        },
        "prevention": [sentence(rng) for _ in range(2)],
        "faq": [{"question": sentence(rng, 8)[:-1] + "?", "answer": paragraph(rng, 2)}],
        "references": [{"title": "PyTorch CUDA semantics", "url": "https://pytorch.org/docs/stable/notes/cuda.html"}],
        "related": [{"id": f"synthetic-{other:05d}", "relation": rng.choice(["similar", "causes", "see-also"])}
                    for other in others],
        "reviewed": f"2026-{rng.randint(1, 11):02d}-{rng.randint(1, 28):02d}",
    }


def make_corpus(root: Path, count: int, seed: int = 7) -> Path:
    """Write `count` entries and the real taxonomy into `root` (emptied first)."""
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    taxonomy_text = (REPO / "entries" / "taxonomy.yaml").read_text(encoding="utf-8")
    (root / "taxonomy.yaml").write_text(taxonomy_text, encoding="utf-8")
    taxonomy = yaml.safe_load(taxonomy_text)
    rng = random.Random(seed)
    for index in range(count):
        entry = make_entry(index, count, taxonomy, rng)
        folder = root / entry["category"]
        folder.mkdir(exist_ok=True)
        text = yaml.safe_dump(entry, sort_keys=False, allow_unicode=True, width=100)
        (folder / f"{entry['id']}.yaml").write_text(text, encoding="utf-8")
    return root
