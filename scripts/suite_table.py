"""Reads the per-shape JSON of scripts/shape-suite.sh (from `gemmtune tune --json` or
`gemmtune bench --json`) and prints the suite table; with --markdown, the table of
docs/performance.md. Rates are computed from the problem: FLOPs and compulsory bytes."""
import json, math, os, sys


def load(out, shape):
    j = json.load(open(os.path.join(out, shape + ".json")))
    p = j["problem"]
    m, n, k = p["m"], p["n"], p["k"]
    if "summary" in j:  # bench --json
        s = j["summary"]
        w = next((c for c in j["configs"] if c["name"] == s["winner"]), None)
        name, us, vus = s["winner"], s["winner_median_us"], s["vendor_median_us"]
        ver = w["outcome"].get("verification") if w else None
    else:  # tune --json
        name, us, vus = j["winner"], j["winner_median_us"], j["vendor_median_us"]
        ver = j.get("winner_verification")
    if not name or us is None or vus is None:
        return None
    es = {"Bf16": 2, "F16": 2, "F32": 4}.get(p["a_type"], 2)
    ed = {"Bf16": 2, "F16": 2, "F32": 4}.get(p["d_type"], 2)
    flops = 2.0 * m * n * k
    nbytes = (m * k + k * n) * es + m * n * ed
    return dict(shape=shape, m=m, n=n, k=k, cfg=name, us=us, vus=vus, ratio=vus / us,
                tflops=flops / us / 1e6, gbps=nbytes / us / 1e3, ai=flops / nbytes,
                vtflops=flops / vus / 1e6, ok=bool(ver and ver.get("passed")),
                device=j.get("device", {}))


def rows(out, shapes):
    got = []
    for s in shapes:
        try:
            r = load(out, s)
        except (OSError, ValueError, KeyError) as e:
            print(f"{s}: no result ({e})", file=sys.stderr)
            continue
        if r:
            got.append(r)
    return got


def geomean_skinny(rs):
    sk = [r["ratio"] for r in rs if r["n"] <= 256]
    if not sk:
        return None, None, 0
    return math.exp(sum(map(math.log, sk)) / len(sk)), min(sk), len(sk)


def main():
    args = [a for a in sys.argv[1:] if a != "--markdown"]
    out, shapes = args[0], args[1:]
    rs = rows(out, shapes)
    g, lo, n = geomean_skinny(rs)
    if "--markdown" in sys.argv:
        print("| shape | best gemmtune kernel | us | TFLOP/s | GB/s | vendor us | speed vs vendor | verified |")
        print("|---|---|---|---|---|---|---|---|")
        for r in rs:
            print(f"| {r['shape']} | `{r['cfg']}` | {r['us']:.1f} | {r['tflops']:.0f} | {r['gbps']:.0f} | {r['vus']:.1f} | {r['ratio']:.3f}x | {'yes' if r['ok'] else 'NO'} |")
    else:
        print(f"{'shape':>18} {'best config':<84} {'us':>8} {'vendor':>8} {'ratio':>6} {'TFLOP/s':>7} {'GB/s':>5} {'ok':>4}")
        for r in rs:
            print(f"{r['shape']:>18} {r['cfg']:<84} {r['us']:8.1f} {r['vus']:8.1f} {r['ratio']:6.3f} {r['tflops']:7.0f} {r['gbps']:5.0f} {'pass' if r['ok'] else 'FAIL':>4}")
    if g is not None:
        print(f"\nskinny shapes (N <= 256): {n}, geometric-mean speed vs vendor {g:.3f}x, lowest {lo:.3f}x")


if __name__ == "__main__":
    main()
