"""Synthetic, valid entries for the benchmarks: N files shaped like the real ones.

The text is generated, but each entry has the real structure and realistic sizes
(about 6 KB, several causes and symptoms, literal and regex signatures, links to
other entries), so the loader, the renderer and the matcher do the same work per
entry as on the shipped corpus.
"""

from __future__ import annotations

import random
import re
import shutil
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from generator.normalise import normalise_regex, normalise_text  # noqa: E402

WORDS = [
    "allocator",
    "gradient",
    "rank",
    "collective",
    "kernel",
    "tensor",
    "buffer",
    "stream",
    "shard",
    "optimizer",
    "checkpoint",
    "worker",
    "bucket",
    "prefetch",
    "partition",
    "activation",
    "scheduler",
    "throughput",
    "latency",
    "overflow",
    "fragment",
    "device",
    "host",
    "process",
    "launcher",
    "driver",
    "runtime",
    "compiler",
    "graph",
    "guard",
    "dtype",
    "precision",
    "batch",
    "sequence",
    "layer",
    "expert",
]
COMPONENTS = [
    "ProcessGroupNCCL",
    "CUDACachingAllocator",
    "DataLoader",
    "ZeroOptimizer",
    "GradScaler",
    "TorchDynamo",
    "XlaRuntime",
    "CublasHandle",
    "ElasticAgent",
    "StateDictLoader",
]


SOURCE = "https://github.com/pytorch/pytorch/blob/v2.5.0/c10/cuda/CUDACachingAllocator.cpp"


def sentence(rng: random.Random, words: int = 14) -> str:
    chosen = [rng.choice(WORDS) for _ in range(words)]
    return " ".join(chosen).capitalize() + "."


def paragraph(rng: random.Random, sentences: int = 5) -> str:
    return " ".join(sentence(rng, rng.randint(9, 18)) for _ in range(sentences))


def real_signatures() -> list[dict]:
    """The shipped corpus's signatures (with examples), as plain data."""
    found = []
    for path in sorted((REPO / "entries").rglob("*.yaml")):
        if path.name == "taxonomy.yaml":
            continue
        for signature in yaml.safe_load(path.read_text(encoding="utf-8")).get("signatures") or []:
            if signature.get("examples"):
                kept = ("literal", "regex", "source", "supporting", "examples")
                found.append({key: signature[key] for key in kept if key in signature})
    return found


_WORD = re.compile(r"(?<![\\\[\w])[A-Za-z]{5,}(?![\w\]])")


def variant(signature: dict, index: int) -> dict | None:
    """A signature like a real one, with one of its words made unique to entry `index`.

    Synthetic corpora then share the vocabulary of real logs (`CUDA out of memory`,
    `ProcessGroupNCCL`, `[rank0]:`) instead of matching text no log contains."""
    pattern = signature.get("regex") or signature["literal"]
    extra = {key: signature[key] for key in ("source", "supporting") if key in signature}
    for word in dict.fromkeys(_WORD.findall(pattern)):
        replacement = f"{word}{index}"
        examples = [example.replace(word, replacement) for example in signature["examples"]]
        if "regex" in signature:
            regex = re.sub(rf"(?<![\\\w]){word}(?!\w)", replacement, signature["regex"])
            # Checked as the validator checks it: on examples read as the matcher reads lines.
            if all(re.search(normalise_regex(regex), normalise_text(example)) for example in examples):
                return {"regex": regex, **extra, "examples": examples}
        else:
            literal = signature["literal"].replace(word, replacement)
            if all(normalise_text(literal) in normalise_text(example) for example in examples):
                return {"literal": literal, **extra, "examples": examples}
    return None


def signatures(rng: random.Random, index: int, pool: list[dict]) -> list[dict]:
    chosen = []
    for signature in rng.sample(pool, 4):
        made = variant(signature, index)
        if made:
            chosen.append(made)
        if len(chosen) == 3:
            break
    if all(signature.get("supporting") for signature in chosen):  # an entry needs one primary signature
        chosen.append({"literal": f"SyntheticFailure{index}: stopped", "source": SOURCE})
    return chosen


def make_entry(index: int, total: int, taxonomy: dict, rng: random.Random, pool: list[dict]) -> dict:
    categories = sorted(taxonomy["categories"])
    tags = sorted(taxonomy["tags"])
    sigs = signatures(rng, index, pool)
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
        "causes": [{"id": f"cause-{n}", "text": sentence(rng, 16), "fix": sentence(rng, 12)} for n in range(3)],
        "observations": [sentence(rng) for _ in range(3)],
        "symptoms": [{"symptom": sentence(rng), "cause": f"cause-{n % 3}"} for n in range(4)],
        "signatures": sigs,
        "affected": [f"{rng.choice(COMPONENTS)} {rng.randint(1, 3)}.{rng.randint(0, 9)}" for _ in range(2)],
        "confirm": [sentence(rng) for _ in range(4)],
        "fix": {
            "summary": sentence(rng),
            "steps": [sentence(rng) for _ in range(3)],
            "code": [
                {
                    "label": "PyTorch",
                    "language": "python",
                    "source": f"import torch\n\nconfig = {{'{rng.choice(WORDS)}': {rng.randint(1, 64)}}}\n",
                }
            ],
            "tradeoff": sentence(rng),
        },
        "prevention": [sentence(rng) for _ in range(2)],
        "faq": [{"question": sentence(rng, 8)[:-1] + "?", "answer": paragraph(rng, 2)}],
        "references": [{"title": "PyTorch CUDA semantics", "url": "https://pytorch.org/docs/stable/notes/cuda.html"}],
        "related": [
            {"id": f"synthetic-{other:05d}", "relation": rng.choice(["similar", "causes", "see-also"])}
            for other in others
        ],
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
    pool = real_signatures()
    for index in range(count):
        entry = make_entry(index, count, taxonomy, rng, pool)
        folder = root / entry["category"]
        folder.mkdir(exist_ok=True)
        text = yaml.safe_dump(entry, sort_keys=False, allow_unicode=True, width=100)
        (folder / f"{entry['id']}.yaml").write_text(text, encoding="utf-8")
    return root
