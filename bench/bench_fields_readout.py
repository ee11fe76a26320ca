"""How narrow a read of the value positions does the planted signal need? Low-rank readouts of
the frozen states at the prompt's value positions, per layer (issue 50, the step after
``bench_probe_features.py``).

``bench_probe_features.py`` probes the value positions ("fields": 27 positions x 576 numbers
for SmolLM2, concatenated) on their top 512 principal components. Here each position is first
reduced to ``r`` numbers: its states projected on ``r`` directions, either one basis shared by
every position (``shared``) or one of its own per position (``perpos``), the directions being
the top principal components of the fit part's states (no label read). The same three probes
and protocols as ``bench_probe_features`` (the learning check's market, its train sample and
valid split, never its test split), read from its cache (``--cache``, built by that bench).

    python bench/bench_fields_readout.py --home H --cache C [--layers 0,10,15,20] [--ranks 1,2,4,8,16]

``perpos`` at ``r = 1`` is what the moderator's fields head (``language_model.fields_head``) reads.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
import bench_probe_features as probes  # noqa: E402


def low_rank(
    fit: np.ndarray, held: np.ndarray, width: int, rank: int, shared: bool
) -> tuple[np.ndarray, np.ndarray]:
    """``fit`` and ``held`` (``[n, P * width]``) with each position reduced to ``rank`` numbers."""
    a, b = fit.reshape(len(fit), -1, width), held.reshape(len(held), -1, width)
    if shared:
        mean = a.reshape(-1, width).mean(axis=0)
        basis = np.linalg.svd(a.reshape(-1, width) - mean, full_matrices=False)[2][:rank].T
        return ((a - mean) @ basis).reshape(len(a), -1), ((b - mean) @ basis).reshape(len(b), -1)
    parts_a, parts_b = [], []
    for p in range(a.shape[1]):
        mean = a[:, p].mean(axis=0)
        basis = np.linalg.svd(a[:, p] - mean, full_matrices=False)[2][:rank].T
        parts_a.append((a[:, p] - mean) @ basis)
        parts_b.append((b[:, p] - mean) @ basis)
    return np.concatenate(parts_a, axis=1), np.concatenate(parts_b, axis=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--ic", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--home", type=Path, required=True, help="the check's market (bench_probe_features)")
    parser.add_argument("--cache", type=Path, required=True, help="bench_probe_features' cached readouts")
    parser.add_argument("--train-states", type=int, default=1200)
    parser.add_argument("--layers", default="0,10,15,20")
    parser.add_argument("--ranks", default="1,2,4,8,16")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    import warnings

    from sklearn.exceptions import ConvergenceWarning

    from stocker_core.composition import register_all
    from stocker_core.language_model.layer_features import LayerReadouts
    from stocker_core.moderator.learning_check import LearningCheckConfig

    warnings.filterwarnings("ignore", category=ConvergenceWarning)
    register_all()
    started_cpu, started = probes.cpu(), time.perf_counter()
    check = LearningCheckConfig(ic=args.ic, seed=args.seed, model=args.model)
    train, valid, _ = probes.split_states(check, args.home, args.train_states)
    found = {split: LayerReadouts.load(args.cache / split) for split in ("train", "valid")}
    if any(v is None for v in found.values()):
        raise SystemExit(f"no cached readouts in {args.cache}: run bench/bench_probe_features.py first")
    fields = found["train"].features["fields"]
    width = fields.shape[2] // len(found["train"].fields)
    result: dict[str, object] = {"model": args.model, "ic": args.ic, "seed": args.seed, "readouts": {}}
    for layer in [int(v) for v in args.layers.split(",")]:
        for shared in (True, False):
            for rank in [int(v) for v in args.ranks.split(",")]:
                figures = {}
                for protocol in ("train_to_valid", "train"):
                    fit, fit_index, held, held_index = probes.protocol_parts(protocol, train, valid)
                    held_split = "train" if protocol == "train" else "valid"
                    x = found["train"].features["fields"][layer][fit_index].astype(np.float64)
                    xh = found[held_split].features["fields"][layer][held_index].astype(np.float64)
                    reduced, reduced_held = low_rank(x, xh, width, rank, shared)
                    figures[protocol] = probes.score(reduced, fit, held, reduced_held)
                name = f"layer {layer} {'shared' if shared else 'perpos'} r{rank}"
                result["readouts"][name] = figures  # type: ignore[index]
                reward = figures["train"]["reward"]
                print(
                    f"{name:<24} reward head: share (train 2/3->1/3) {reward['share']:+.0%}, agreement "
                    f"train->valid {figures['train_to_valid']['reward']['oracle_agreement']:.2f} / "
                    f"train 2/3->1/3 {reward['oracle_agreement']:.2f}; direction balanced acc "
                    f"{figures['train_to_valid']['direction']['balanced_accuracy']:.2f} / "
                    f"{figures['train']['direction']['balanced_accuracy']:.2f}",
                    flush=True,
                )
    result["cpu_seconds"] = round(probes.cpu() - started_cpu, 1)
    result["wall_seconds"] = round(time.perf_counter() - started, 1)
    print(f"took {result['cpu_seconds']} CPU-s, {result['wall_seconds']} s wall")
    if args.out is not None:
        args.out.write_text(json.dumps(result, indent=1, default=str))


if __name__ == "__main__":
    main()
