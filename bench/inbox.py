"""The personal inbox ranker (inbox/ranker.py) measured offline, the way Scholar Inbox measures its
own (arXiv 2504.08385), against a recency-only ranking and arxiv-sanity-lite's TF-IDF + SVM.

    python bench/inbox.py [--seed 0] [--skip-timing] [--corpus ../shared/corpus] [--out FILE]

Papers: every real arXiv record of the test corpus that has a title, an abstract, authors,
categories and a submission date (Kaggle snapshot head, Atom and OAI-PMH responses, .abs records
and mailing listings, metadata.jsonl), deduplicated by arXiv id; arxiv-browse's own made-up test
papers are dropped. Vectors are the product's paper vectors: MiniLM of "title. abstract"
(ingest.pipeline.paper_text) through corpus.embedder.

Simulated users, from labels that arXiv's authors and moderators gave, never from our features:

- a category follower: follows one arXiv category (cross-lists count; aliases such as math.IT =
  cs.IT merged). Their 👍 are the category's earlier half of papers (submission date, then id), and
  what they want is its later half. Their 👎 (simulated) are the training-period papers of sibling
  categories: same archive (cs.* for cs.SE; hep-* and nucl-* count as one archive) or sharing a
  category with their 👍 papers. Categories with at least MIN_PAPERS papers become users.
- an author: same split over their own papers (name as surname + first initial); 👎 are other
  training-period papers in the categories of their 👍. Authors with at least MIN_AUTHOR_PAPERS
  papers (few: authors rarely repeat in this little data).

Every learned model sees only the training period (papers up to the user's last 👍): the personal
ranker is trained exactly as the product trains it, fit(examples(liked, disliked, random_papers)),
random_papers being the other training-period papers (all of them: fewer than RANDOM_NEGATIVES);
arxiv-sanity-lite's SVM learns from the same papers (👍 against everything else it has seen).

Protocol 1 (nDCG@10): each later paper the user wants is ranked among up to 100 random papers of
the test period outside the user's set (seeded); nDCG@10 with one relevant item = 1/log2(1+rank)
if rank <= 10 (ties count against it), averaged per user, then over users.
Protocol 2 (AUC, balanced accuracy): per user, their later papers against the later papers of
sibling categories (hard negatives: close, but not theirs). Balanced accuracy thresholds the
logit / SVM margin at 0; recency has no threshold (n/a).

Recency: newer first (submission date, then arXiv id): what an inbox with no profile shows.
arxiv-sanity-lite: compute.py's TfidfVectorizer settings fitted on the whole pool (title +
abstract; its compute.py also appends author names: a secondary row), then send_emails.py's
LinearSVC(class_weight='balanced', max_iter=10000, tol=1e-6, C=0.01) (serve.py uses C=0.1: a
secondary row), scored with decision_function.

Also a sweep of the ranker's C (secondary: the main rows use the product's C) and the scoring time
of 1,000 users x 50,000 new papers (random unit vectors) through inbox.ranker.scores in one call,
plus each user's top 50. Prints tables; writes the figures to bench/out/inbox.json.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import time
import unicodedata
import zlib
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path
from xml.etree.ElementTree import Element

import defusedxml.ElementTree as SafeET
import numpy as np
from pydantic import BaseModel
from scipy.sparse import csr_matrix
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics import roc_auc_score
from sklearn.svm import LinearSVC
from threadpoolctl import threadpool_info

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from corpus.embedder import Embedder
from corpus.ids import parse_arxiv_id
from corpus.models import PaperMeta
from inbox import ranker
from ingest.arxiv_api import ArxivError, parse_feed
from ingest.pipeline import paper_text
from ingest.snapshot import snapshot_records
from ingest.sources import meta_from_record

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
OUT = ROOT / "bench" / "out" / "inbox.json"
OAI_ARXIV = "{http://arxiv.org/OAI/arXiv/}"
# arxiv-browse's own test fixtures among the real records: made-up papers, not arXiv's.
FIXTURE = re.compile(r"\bfake\b|made up papers|gcp access secret|improving arxiv operations", re.I)
FIXTURE_AUTHORS = {"Test User"}
# arXiv's category aliases (the same category under two names) and pre-2000 archives merged since.
ALIASES = {
    "math.IT": "cs.IT", "math.MP": "math-ph", "stat.TH": "math.ST", "q-fin.EC": "econ.GN",
    "cs.SY": "eess.SY", "cs.NA": "math.NA", "funct-an": "math.FA", "alg-geom": "math.AG",
    "q-alg": "math.QA", "dg-ga": "math.DG", "solv-int": "nlin.SI", "chao-dyn": "nlin.CD",
    "patt-sol": "nlin.PS", "adap-org": "nlin.AO", "cmp-lg": "cs.CL", "mtrl-th": "cond-mat.mtrl-sci",
    "supr-con": "cond-mat.supr-con",
}  # fmt: skip
MIN_PAPERS = 8  # a category needs at least 4 earlier papers to learn from and 4 later ones to find
MIN_AUTHOR_PAPERS = 6  # authors rarely repeat in this little data: 3 and 3
PROTOCOL1_NEGATIVES = 100
TOP_K = 10
SVM_C = 0.01  # send_emails.py, arxiv-sanity-lite's daily recommendations
C_SWEEP = (0.01, 0.1, 1.0, 10.0, 100.0)
TIMING_USERS, TIMING_PAPERS, TIMING_TOP = 1000, 50_000, 50
BOOTSTRAP = 2000


class Paper(BaseModel):
    paper_id: str
    title: str
    abstract: str
    authors: list[str]
    categories: list[str]
    date: datetime
    source: str


class User(BaseModel):
    """A simulated user: papers are indices into the pool, which is in time order."""

    name: str
    train: list[int]  # their 👍
    test: list[int]  # what they want later
    disliked: list[int]  # simulated 👎: training-period hard negatives
    random: list[int]  # the other training-period papers
    hard_test: list[int]  # protocol 2's negatives
    pool_test: list[int]  # protocol 1 draws from these: test period, not theirs


# -- the papers ---------------------------------------------------------------------------------


def _clean(text: str | None) -> str:
    return " ".join((text or "").split())


def _paper(meta: PaperMeta | None, source: str) -> Paper | None:
    """A usable record: every field the benchmark needs, and not a fixture."""
    if meta is None or not meta.paper_id or not meta.categories:
        return None
    title, abstract = _clean(meta.title), _clean(meta.abstract)
    date = meta.published or meta.updated
    if not title or not abstract or date is None or not meta.authors:
        return None
    if FIXTURE.search(title) or FIXTURE_AUTHORS & set(meta.authors):
        return None
    date = date if date.tzinfo else date.replace(tzinfo=UTC)
    return Paper(paper_id=meta.paper_id, title=title, abstract=abstract, authors=meta.authors,
                 categories=meta.categories, date=date, source=source)  # fmt: skip


def _from_atom(folder: Path) -> list[PaperMeta]:
    metas = []
    for path in sorted(folder.glob("*.xml")):
        try:
            metas.extend(parse_feed(path.read_bytes())[1])
        except ArxivError:
            continue  # a recorded error response (unknown or malformed id)
    return metas


def _oai_text(el: Element, tag: str) -> str | None:
    found = el.find(f"{OAI_ARXIV}{tag}")
    return found.text if found is not None else None


def _from_oai(folder: Path) -> list[PaperMeta]:
    metas = []
    for path in sorted(folder.glob("*.xml")):
        for rec in SafeET.fromstring(path.read_bytes()).iter(f"{OAI_ARXIV}arXiv"):
            names = [(_oai_text(a, "forenames") or "", _oai_text(a, "keyname") or "")
                     for a in rec.iter(f"{OAI_ARXIV}author")]  # fmt: skip
            created = _oai_text(rec, "created")
            parsed = parse_arxiv_id(_oai_text(rec, "id") or "")
            metas.append(
                PaperMeta(
                    paper_id=parsed.paper_id if parsed else "",
                    title=_oai_text(rec, "title"),
                    abstract=_oai_text(rec, "abstract"),
                    authors=[_clean(f"{first} {last}") for first, last in names],
                    categories=(_oai_text(rec, "categories") or "").split(),
                    published=datetime.fromisoformat(created).replace(tzinfo=UTC) if created else None,
                )
            )
    return metas


def _abs_authors(text: str) -> list[str]:
    while re.search(r"\([^()]*\)", text):  # affiliations, nested "((1) X, (2) Y)" included
        text = re.sub(r"\([^()]*\)", "", text)
    return [a.strip() for a in text.replace(" and ", ", ").split(",") if a.strip()]


def _from_abs_text(text: str) -> PaperMeta | None:
    """One record in the .abs / mailing-listing form: header fields, then the abstract between
    lines holding only two backslashes."""
    parts = re.split(r"^\\\\\s*$", text, flags=re.M)
    at = next((i for i, p in enumerate(parts) if re.search(r"^Title:", p, re.M)), None)
    if at is None:
        return None
    header = parts[at]
    fields: dict[str, str] = {}
    key = ""
    for line in header.splitlines():
        m = re.match(r"^([A-Za-z-]+):\s*(.*)$", line)
        if m:
            key = m.group(1)
            fields[key] = m.group(2)
        elif key and line.startswith(" "):
            fields[key] += " " + line.strip()
    idm = re.search(r"^arXiv:(\S+)", header, re.M)
    parsed = parse_arxiv_id(idm.group(1)) if idm else None
    datem = re.search(r"^Date: (.+? GMT)", header, re.M)
    try:
        date = parsedate_to_datetime(datem.group(1)) if datem else None
    except (TypeError, ValueError):
        date = None
    after = parts[at + 1] if at + 1 < len(parts) else ""
    return PaperMeta(
        paper_id=parsed.paper_id if parsed else "",
        title=fields.get("Title"),
        abstract="" if after.lstrip().startswith("( http") else after,  # a listing with no abstract
        authors=_abs_authors(fields.get("Authors", "")),
        categories=fields.get("Categories", "").split(),
        published=date,
    )


def _from_abs(folder: Path) -> list[PaperMeta]:
    metas = [
        _from_abs_text(p.read_text(encoding="utf-8", errors="replace")) for p in sorted(folder.iterdir())
    ]
    return [m for m in metas if m is not None]


def _from_listings(folder: Path) -> list[PaperMeta]:
    metas = []
    for path in sorted(folder.iterdir()):
        for record in re.split(
            r"^-{70,}\s*$", path.read_text(encoding="utf-8", errors="replace"), flags=re.M
        ):
            meta = _from_abs_text(record)
            if meta is not None:
                metas.append(meta)
    return metas


def _from_metadata(path: Path) -> list[PaperMeta]:
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [meta_from_record(r, str(r.get("arxiv_id") or ""), None) for r in records]


def load_papers(corpus: Path) -> list[Paper]:
    """Every usable real paper, deduplicated by arXiv id (the first source read wins, in the
    order below: metadata.jsonl is last because its abstracts are a rough PDF reading), in time
    order (submission date, then id)."""
    sources: list[tuple[str, list[PaperMeta | None]]] = [
        ("kaggle", list(snapshot_records(corpus / "kaggle" / "arxiv-metadata-oai-snapshot.head.jsonl"))),
        ("atom", list(_from_atom(corpus / "atom"))),
        ("oai", list(_from_oai(corpus / "oai"))),
        ("abs", list(_from_abs(corpus / "arxiv-browse" / "abs"))),
        ("listings", list(_from_listings(corpus / "arxiv-browse" / "listings"))),
        ("metadata", list(_from_metadata(corpus / "metadata.jsonl"))),
    ]
    papers: dict[str, Paper] = {}
    for name, metas in sources:
        for meta in metas:
            paper = _paper(meta, name)
            if paper is not None and paper.paper_id not in papers:
                papers[paper.paper_id] = paper
    return sorted(papers.values(), key=lambda p: (p.date, p.paper_id))


# -- the users ----------------------------------------------------------------------------------


def categories(paper: Paper) -> set[str]:
    return {ALIASES.get(c, c) for c in paper.categories}


def archive(category: str) -> str:
    """cs.SE -> cs; hep-ph, hep-th -> hep; nucl-th -> nucl; math-ph -> math."""
    name = category.split(".")[0]
    return name.split("-")[0] if name in {"hep-ph", "hep-th", "hep-ex", "hep-lat", "nucl-th",
                                          "nucl-ex", "math-ph"} else name  # fmt: skip


def author_key(name: str) -> str:
    """Surname and first initial, accents (Unicode or TeX) folded: 'A. Del Maestro' is 'Adrian
    Del Maestro'."""
    name = re.sub(r"\\[`'^\"~=.uvHckbdrt]|\\[a-z]+\s|[{}]", "", name)
    name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    words = re.findall(r"[a-z]+", name)
    return f"{words[-1]} {words[0][0]}" if len(words) >= 2 else ""


def _user(
    name: str, members: list[int], close: Callable[[int], bool], n: int, least: int = MIN_PAPERS
) -> User | None:
    """Earlier half of `members` rated 👍, later half wanted; `close(i)` says whether a paper that
    is not theirs is a hard negative."""
    if len(members) < least:
        return None
    mine = set(members)
    train, test = members[: len(members) // 2], members[len(members) // 2 :]
    cutoff = train[-1]
    return User(
        name=name,
        train=train,
        test=test,
        disliked=[i for i in range(cutoff + 1) if i not in mine and close(i)],
        random=[i for i in range(cutoff + 1) if i not in mine and not close(i)],
        hard_test=[i for i in range(cutoff + 1, n) if i not in mine and close(i)],
        pool_test=[i for i in range(cutoff + 1, n) if i not in mine],
    )


def category_users(papers: list[Paper]) -> list[User]:
    cats = [categories(p) for p in papers]
    users = []
    for category in sorted({c for cs in cats for c in cs}):
        members = [i for i, cs in enumerate(cats) if category in cs]
        liked_cats = set().union(*(cats[i] for i in members[: len(members) // 2])) - {category}

        def close(i: int, category: str = category, liked_cats: set[str] = liked_cats) -> bool:
            return any(archive(c) == archive(category) for c in cats[i]) or bool(cats[i] & liked_cats)

        user = _user(f"cat:{category}", members, close, len(papers))
        if user is not None:
            users.append(user)
    return users


def author_users(papers: list[Paper]) -> list[User]:
    cats = [categories(p) for p in papers]
    keys = [{author_key(a) for a in p.authors} - {""} for p in papers]
    users = []
    for key, count in sorted(Counter(k for ks in keys for k in ks).items()):
        if count < MIN_AUTHOR_PAPERS:
            continue
        members = [i for i, ks in enumerate(keys) if key in ks]
        liked_cats = set().union(*(cats[i] for i in members[: len(members) // 2]))

        def close(i: int, liked_cats: set[str] = liked_cats) -> bool:
            return bool(cats[i] & liked_cats)

        user = _user(f"author:{key}", members, close, len(papers), MIN_AUTHOR_PAPERS)
        if user is not None:
            users.append(user)
    return users


# -- the methods --------------------------------------------------------------------------------

Scorer = Callable[[User], Callable[[list[int]], np.ndarray]]


def personal(vectors: np.ndarray, c: float = ranker.C, dislikes: bool = True) -> Scorer:
    """The product's ranker, trained as the product trains it."""

    def train(user: User) -> Callable[[list[int]], np.ndarray]:
        data = ranker.examples(
            liked=vectors[user.train],
            disliked=vectors[user.disliked] if dislikes else vectors[:0],
            random_papers=vectors[user.random + ([] if dislikes else user.disliked)],
        )
        weights = ranker.fit(data, c=c)
        if weights is None:
            raise ValueError(f"{user.name}: nothing to learn from")
        return lambda items: ranker.scores(weights, vectors[items])

    return train


def recency(n: int) -> Scorer:
    """Newer first; the pool is in (date, id) order, so the position breaks date ties by id."""
    order = np.arange(n, dtype=np.float64)
    return lambda _user: lambda items: order[items]


def random_order(n: int, seed: int) -> Scorer:
    """A reference: a seeded random order (expected nDCG@10 with 100 negatives 0.045, AUC 0.5)."""
    order = np.random.default_rng(seed).permutation(n).astype(np.float64)
    return lambda _user: lambda items: order[items]


def tfidf_features(texts: list[str]) -> csr_matrix:
    """arxiv-sanity-lite's compute.py, fitted on the whole pool as it fits on its whole database."""
    v = TfidfVectorizer(input="content", encoding="utf-8", decode_error="replace", strip_accents="unicode",
                        lowercase=True, analyzer="word", stop_words="english",
                        token_pattern=r"(?u)\b[a-zA-Z_][a-zA-Z0-9_]+\b", ngram_range=(1, 2),
                        max_features=10000, norm="l2", use_idf=True, smooth_idf=True, sublinear_tf=True,
                        max_df=0.5, min_df=5)  # fmt: skip
    return v.fit_transform(texts).astype(np.float32)


def sanity_svm(x: csr_matrix, c: float = SVM_C) -> Scorer:
    """A LinearSVC per user on the 👍 against every other paper it has seen (the training period)."""

    def train(user: User) -> Callable[[list[int]], np.ndarray]:
        rows = user.train + user.disliked + user.random
        y = np.zeros(len(rows))
        y[: len(user.train)] = 1
        clf = LinearSVC(class_weight="balanced", verbose=False, max_iter=10000, tol=1e-6, C=c)
        clf.fit(x[rows], y)
        return lambda items: clf.decision_function(x[items])

    return train


# -- the protocols ------------------------------------------------------------------------------


def ndcg_one(pos: float, negs: np.ndarray) -> float:
    """nDCG@TOP_K with one relevant item: ties with a negative count against it."""
    rank = 1 + int((negs >= pos).sum())
    return 1.0 / math.log2(1 + rank) if rank <= TOP_K else 0.0


def protocol1(user: User, score: Callable[[list[int]], np.ndarray], seed: int) -> tuple[float, int, int]:
    """(mean nDCG@10 over the user's wanted papers, pairs, negatives per list)."""
    rng = np.random.default_rng([seed, zlib.crc32(user.name.encode())])
    values, size = [], 0
    for pos in user.test:
        k = min(PROTOCOL1_NEGATIVES, len(user.pool_test))
        negs = sorted(rng.choice(user.pool_test, size=k, replace=False).tolist())
        s = score([pos, *negs])
        values.append(ndcg_one(float(s[0]), s[1:]))
        size = k
    return float(np.mean(values)), len(values), size


def protocol2(user: User, score: Callable[[list[int]], np.ndarray]) -> tuple[float, float]:
    """(AUC, balanced accuracy at 0) of the user's later papers against the hard negatives."""
    s = score(user.test + user.hard_test)
    y = np.r_[np.ones(len(user.test)), np.zeros(len(user.hard_test))]
    auc = float(roc_auc_score(y, s))
    pred = s > 0
    bacc = float((pred[y == 1].mean() + (~pred[y == 0]).mean()) / 2)
    return auc, bacc


def evaluate(users: list[User], methods: dict[str, Scorer], seed: int) -> dict[str, dict[str, dict]]:
    """Per method, per user: nDCG@10 (protocol 1), AUC and balanced accuracy (protocol 2)."""
    out: dict[str, dict[str, dict]] = {}
    for name, method in methods.items():
        out[name] = {}
        for user in users:
            score = method(user)
            ndcg, pairs, negs = protocol1(user, score, seed)
            row: dict = {"ndcg10": ndcg, "p1_pairs": pairs, "p1_negatives": negs}
            if len(user.hard_test) >= 2:
                auc, bacc = protocol2(user, score)
                row |= {"auc": auc, "bacc": bacc, "p2_pairs": len(user.test) * len(user.hard_test)}
            out[name][user.name] = row
    return out


def mean_of(rows: dict[str, dict], key: str) -> float | None:
    values = [r[key] for r in rows.values() if key in r]
    return float(np.mean(values)) if values else None


def paired(a: dict[str, dict], b: dict[str, dict], key: str, seed: int) -> dict:
    """Users where `a` beats / ties / loses to `b`, and a bootstrap 95% interval (over users) of the
    mean difference."""
    names = [u for u in a if key in a[u] and key in b[u]]
    diff = np.array([a[u][key] - b[u][key] for u in names])
    rng = np.random.default_rng(seed)
    boot = diff[rng.integers(0, len(diff), size=(BOOTSTRAP, len(diff)))].mean(axis=1)
    return {
        "wins": int((diff > 1e-12).sum()),
        "ties": int((np.abs(diff) <= 1e-12).sum()),
        "losses": int((diff < -1e-12).sum()),
        "mean_diff": float(diff.mean()),
        "ci95": [float(np.percentile(boot, 2.5)), float(np.percentile(boot, 97.5))],
    }


# -- scoring time -------------------------------------------------------------------------------


def best_of(runs: int, fn: Callable[[], object]) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def scoring_time(seed: int) -> dict:
    """1,000 users' weights against 50,000 new papers (random unit vectors) in one call, and each
    user's top 50 (argpartition, then the 50 sorted)."""
    rng = np.random.default_rng(seed)
    weights = rng.standard_normal((TIMING_USERS, ranker.DIM + 1)).astype(np.float32)
    vectors = rng.standard_normal((TIMING_PAPERS, ranker.DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    out: dict[str, np.ndarray] = {}

    def score() -> None:
        out["s"] = ranker.scores(weights, vectors)

    def top() -> None:
        s = out["s"]
        idx = np.argpartition(-s, TIMING_TOP, axis=1)[:, :TIMING_TOP]
        part = np.take_along_axis(s, idx, axis=1)
        out["top"] = np.take_along_axis(idx, np.argsort(-part, axis=1), axis=1)

    t_score = best_of(3, score)
    t_top = best_of(3, top)
    return {"users": TIMING_USERS, "papers": TIMING_PAPERS, "top": TIMING_TOP, "scores_s": t_score,
            "top_s": t_top, "total_s": t_score + t_top, "scores_shape": list(out["s"].shape)}  # fmt: skip


def threads() -> dict:
    import torch

    blas = [{"api": i["internal_api"], "threads": i["num_threads"]} for i in threadpool_info()]
    return {"cpus": os.cpu_count(), "affinity": len(os.sched_getaffinity(0)),
            "torch_threads": torch.get_num_threads(), "numpy_blas": blas}  # fmt: skip


# -- printing -----------------------------------------------------------------------------------

RANDOM_REF = "random order (reference)"


def fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def print_table(title: str, rows: list[list[str]]) -> None:
    print(f"\n{title}")
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for n, row in enumerate(rows):
        cells = [
            c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        print("  ".join(cells))
        if n == 0:
            print("  ".join("-" * w for w in widths))


def summary(rows: dict[str, dict], thresholded: bool) -> dict:
    return {
        "users": len(rows),
        "ndcg10": mean_of(rows, "ndcg10"),
        "p2_users": sum("auc" in r for r in rows.values()),
        "auc": mean_of(rows, "auc"),
        "bacc": mean_of(rows, "bacc") if thresholded else None,
    }


def summary_rows(
    results: dict[str, dict[str, dict]], methods: list[str], no_bacc: set[str]
) -> list[list[str]]:
    rows = [["method", "users", "nDCG@10 (P1)", "P2 users", "AUC (P2)", "bal.acc (P2)"]]
    for m in methods:
        s = summary(results[m], m not in no_bacc)
        rows.append([m, str(s["users"]), fmt(s["ndcg10"]), str(s["p2_users"]), fmt(s["auc"]), fmt(s["bacc"])])
    return rows


def print_users(users: list[User], rows: dict[str, dict]) -> None:
    table = [["user", "👍", "wanted", "👎 (train)", "random (train)", "P1 negs", "P2 hard negs"]]
    for u in users:
        sizes = [u.train, u.test, u.disliked, u.random]
        table.append(
            [u.name, *(str(len(s)) for s in sizes), str(rows[u.name]["p1_negatives"]), str(len(u.hard_test))]
        )
    print_table(
        "Users (👍 = earlier half, wanted = later half; P1 negatives per list; P2 hard negatives)", table
    )


def print_paired(results: dict[str, dict[str, dict]], ours: str, others: list[str], seed: int) -> dict:
    comparisons = {}
    rows = [
        ["personal LR vs", "metric", "wins", "ties", "losses", "mean diff", "95% CI (bootstrap over users)"]
    ]
    for other in others:
        for key in ("ndcg10", "auc"):
            p = comparisons[f"{other} / {key}"] = paired(results[ours], results[other], key, seed)
            ci = f"[{p['ci95'][0]:+.3f}, {p['ci95'][1]:+.3f}]"
            counts = [str(p["wins"]), str(p["ties"]), str(p["losses"])]
            rows.append([other, key, *counts, f"{p['mean_diff']:+.3f}", ci])
    print_table("Per user, paired (a tie: the same figure for that user)", rows)
    return comparisons


def print_per_user(users: list[User], results: dict[str, dict[str, dict]], names: list[str]) -> None:
    short = [m.split(" (")[0] for m in names]
    rows = [["user", *(f"AUC {s}" for s in short), *(f"nDCG@10 {s}" for s in short)]]
    for u in users:
        aucs = [fmt(results[m][u.name].get("auc")) for m in names]
        rows.append([u.name, *aucs, *(fmt(results[m][u.name]["ndcg10"]) for m in names)])
    print_table("Per user", rows)


def methods_for(papers: list[Paper], vectors: np.ndarray, seed: int) -> tuple[dict, dict, dict]:
    """The main rows, the secondary rows, the C sweep."""
    x = tfidf_features([f"{p.title} {p.abstract}" for p in papers])
    x_authors = tfidf_features([f"{p.title} {p.abstract} {' '.join(p.authors)}" for p in papers])
    print(f"TF-IDF vocabulary: {x.shape[1]} terms ({x_authors.shape[1]} with author names)")
    main_rows = {
        f"personal LR (C={ranker.C:g})": personal(vectors),
        "recency": recency(len(papers)),
        f"arxiv-sanity-lite (TF-IDF+SVM, C={SVM_C:g})": sanity_svm(x),
    }
    secondary = {
        RANDOM_REF: random_order(len(papers), seed),
        "personal LR, no 👎 (those papers as random ones)": personal(vectors, dislikes=False),
        "arxiv-sanity-lite, C=0.1 (serve.py)": sanity_svm(x, c=0.1),
        "arxiv-sanity-lite, + author names (compute.py)": sanity_svm(x_authors),
    }
    sweep = {f"personal LR, C={c:g}": personal(vectors, c=c) for c in C_SWEEP}
    return main_rows, secondary, sweep


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-timing", action="store_true")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    started = time.perf_counter()

    papers = load_papers(args.corpus)
    users = category_users(papers) + author_users(papers)
    sources = dict(Counter(p.source for p in papers))
    n_cat = sum(u.name.startswith("cat:") for u in users)
    print(f"{len(papers)} papers ({sources}), {papers[0].date.date()} .. {papers[-1].date.date()}")
    print(f"{len(users)} users: {n_cat} category followers (>= {MIN_PAPERS} papers), "
          f"{len(users) - n_cat} authors (>= {MIN_AUTHOR_PAPERS} papers)")  # fmt: skip

    t0 = time.perf_counter()
    vectors = Embedder().embed([paper_text(p.title, p.abstract, "") for p in papers])
    embed_s = time.perf_counter() - t0
    main_rows, secondary, sweep = methods_for(papers, vectors, args.seed)
    results = evaluate(users, main_rows | secondary | sweep, args.seed)
    names = list(main_rows)
    ours, rec, svm = names

    print_users(users, results[ours])
    p1_pairs = sum(r["p1_pairs"] for r in results[ours].values())
    p2_pairs = sum(r.get("p2_pairs", 0) for r in results[ours].values())
    print_table(f"Main: protocol 1 over {p1_pairs} lists (a wanted paper among up to 100 random ones), "
                f"protocol 2 over {p2_pairs} (wanted, hard negative) pairs; means over users",
                summary_rows(results, names, {rec}))  # fmt: skip
    comparisons = print_paired(results, ours, [rec, svm], args.seed)
    for group in ("cat:", "author:"):
        sub = {m: {u: r for u, r in results[m].items() if u.startswith(group)} for m in names}
        print_table(f"Only the {group[:-1]} users", summary_rows(sub, names, {rec}))
    print_table(
        "Secondary rows (same users)", summary_rows(results, [ours, *secondary, svm], {rec, RANDOM_REF})
    )
    print_table("C sweep of the personal ranker (same users: the main rows use the product's C, not one "
                "picked here)", summary_rows(results, list(sweep), set()))  # fmt: skip
    print_per_user(users, results, names)

    timing = None if args.skip_timing else scoring_time(args.seed)
    used = threads()
    if timing:
        print(f"\nScoring {timing['users']:,} users x {timing['papers']:,} papers: ranker.scores "
              f"{timing['scores_s']:.2f} s, top {timing['top']} per user {timing['top_s']:.2f} s, "
              f"total {timing['total_s']:.2f} s (best of 3)")  # fmt: skip
    run_s = time.perf_counter() - started
    print(f"threads: {used}\nembedding {len(papers)} papers: {embed_s:.1f} s; whole run {run_s:.1f} s")

    figures = {
        "seed": args.seed,
        "papers": len(papers),
        "sources": sources,
        "paper_ids": [p.paper_id for p in papers],
        "users": [u.model_dump() for u in users],
        "protocol1_pairs": p1_pairs,
        "protocol2_pairs": p2_pairs,
        "summary": {m: summary(r, m not in {rec, RANDOM_REF}) for m, r in results.items()},
        "paired": comparisons,
        "per_user": results,
        "timing": timing,
        "threads": used,
        "embed_s": embed_s,
        "run_s": run_s,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(figures, indent=1, ensure_ascii=False), encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
