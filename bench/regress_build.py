"""Build variants for bench/regress.py: `[label=]rev:profile:features:rustflags` or `[label=]@PATH`.

A variant names a git revision (`.` is the working tree as it is, uncommitted edits included), a
cargo profile (`release`, `release-lto`, ...; default `release`) with optional settings after `/`
(`release/opt-level=2/lto=thin/codegen-units=16`: `opt-level` 0-3, s, z; `lto` off, thin,
fat; `codegen-units` N; each passed as `cargo --config profile.P.KEY=VALUE`, so no Cargo.toml
edit is needed), talus-cli features joined by `+`
(`jemalloc`, `mimalloc`; default none) and RUSTFLAGS (default none, whatever the caller's
environment says). `@PATH` is a `talus` binary built elsewhere (not rebuilt, not labelled by rev).

Layout under the work dir (outside the repo):
  src/<sha12>/                        `git archive` of each revision, made once
  target/<profile>[_<features>][_<rustflags>]-revs/  one cargo target dir per build
                                      configuration, shared by all fixed revisions: dependencies
                                      compile once
                                      per configuration, only the workspace crates per revision
                                      (cargo keys path crates by their path inside the workspace
                                      and decides freshness by mtime, so every file of a revision's
                                      tree is touched before it is built: its crates always
                                      rebuild, never reuse another revision's)
  target/<config>/                    the same for `.`, which is never touched
  bin/<sha12|worktree>-<config>/talus the binary of each variant, copied out of the target dir;
                                      a fixed revision's binary is reused by later runs

A profile that an old revision's Cargo.toml lacks (release-lto before it existed) is defined for
that build with `cargo --config`, copied from the current checkout's Cargo.toml, so old and new
revisions can be compared under the same profile.
"""
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass, field

BUILTIN_PROFILES = {"dev", "release", "test", "bench"}


@dataclass
class Variant:
    label: str
    spec: str
    rev: str = "."            # git revision, "." = the working tree
    profile: str = "release"
    features: list = field(default_factory=list)
    rustflags: str = ""
    settings: list = field(default_factory=list)  # [(key, value)] profile overrides
    binary: str = ""          # set by build(), or given with @PATH
    sha: str = ""             # the commit built ("" for @PATH; HEAD's for ".")
    subject: str = ""         # the commit's subject line
    build_secs: float = 0.0
    build_info: str = ""      # db_bench's header: "profile X, target-cpu Y, allocator Z"

    def config_slug(self):
        parts = [self.profile] + [slug(f"{k}-{v}") for k, v in self.settings]
        if self.features:
            parts.append(slug("+".join(self.features)))
        if self.rustflags:
            parts.append(slug(self.rustflags))
        return "_".join(parts)


def slug(s):
    return re.sub(r"[^A-Za-z0-9.+]+", "-", s).strip("-")[:80] or "none"


def parse_variants(lists, singles):
    """Variants from `--variants a,b` lists and repeated `--variant` specs, in order."""
    specs = []
    for l in lists or []:
        specs += [s for s in l.split(",") if s.strip()]
    specs += singles or []
    out = []
    for i, s in enumerate(specs):
        s = s.strip()
        label = None
        m = re.match(r"^([A-Za-z0-9_.+-]+)=(.*)$", s)
        if m and not m.group(1).startswith("@"):
            label, s = m.group(1), m.group(2)
        if s.startswith("@"):
            path = os.path.abspath(s[1:])
            out.append(Variant(label or f"v{i}", s, binary=path))
            continue
        parts = s.split(":", 3) + [""] * 3
        rev, profile, feats, flags = parts[0] or ".", parts[1] or "release", parts[2], parts[3]
        profile, *sets = profile.split("/")
        features = [f for f in re.split(r"[+ ]", feats) if f]
        out.append(Variant(label or s, s, rev=rev, profile=profile or "release",
                           features=features, rustflags=flags,
                           settings=[profile_setting(x) for x in sets if x]))
    labels = [v.label for v in out]
    if len(set(labels)) != len(labels):
        sys.exit(f"regress: variant labels must differ: {labels} (name them: label=spec)")
    return out


PROFILE_SETTINGS = {
    "opt-level": {"0": 0, "1": 1, "2": 2, "3": 3, "s": "s", "z": "z"},
    "lto": {"off": "off", "false": False, "thin": "thin", "fat": "fat", "true": True},
}


def profile_setting(text):
    """`key=value` of a profile setting, checked: `(key, toml value)`; exits naming a bad one."""
    key, _, value = text.partition("=")
    if key in PROFILE_SETTINGS and value in PROFILE_SETTINGS[key]:
        return key, PROFILE_SETTINGS[key][value]
    if key == "codegen-units" and value.isdigit() and int(value) > 0:
        return key, int(value)
    sys.exit(f"regress: profile setting {text!r}: expected opt-level=0|1|2|3|s|z, "
             f"lto=off|thin|fat or codegen-units=N")


# Post 004's build study (issue 38 item 5) for the working tree: `--study=builds` runs these.
# The base is the release profile as Cargo.toml has it (opt-level 3, codegen-units 4, no LTO).
BUILD_STUDY = [
    "rel=.:release",
    "o2=.:release/opt-level=2",
    "thin=.:release/lto=thin",
    "fat=.:release/lto=fat",
    "cgu1=.:release/codegen-units=1",
    "cgu16=.:release/codegen-units=16",
    "x86-64-v2=.:release::-C target-cpu=x86-64-v2",
    "x86-64-v3=.:release::-C target-cpu=x86-64-v3",
    "native=.:release::-C target-cpu=native",
    "jemalloc=.:release:jemalloc",
    "mimalloc=.:release:mimalloc",
    "fat_native=.:release-lto::-C target-cpu=native",
]


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def profile_dir(profile):
    return {"dev": "debug", "test": "debug", "bench": "release"}.get(profile, profile)


def toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    return '"' + str(v).replace('"', '\\"') + '"'


def profile_overrides(repo, src, profile):
    """`--config` arguments defining `profile` for a source tree whose Cargo.toml lacks it."""
    if profile in BUILTIN_PROFILES:
        return []
    with open(os.path.join(src, "Cargo.toml"), "rb") as f:
        have = tomllib.load(f).get("profile", {})
    if profile in have:
        return []
    with open(os.path.join(repo, "Cargo.toml"), "rb") as f:
        want = tomllib.load(f).get("profile", {}).get(profile)
    if want is None:
        sys.exit(f"regress: profile {profile!r} is in neither {src} nor {repo}'s Cargo.toml")
    args = []
    for k, v in want.items():
        if isinstance(v, dict):
            continue  # per-package overrides: not needed by the profiles defined here
        args += ["--config", f"profile.{profile}.{k}={toml_value(v)}"]
    return args


def source_tree(repo, work, v):
    """The source dir for `v` (archived once per commit); fills v.sha and v.subject."""
    if v.rev == ".":
        v.sha = git(repo, "rev-parse", "HEAD")
        dirty = git(repo, "status", "--porcelain", "--untracked-files=no")
        v.subject = "working tree" + (" (uncommitted changes)" if dirty else "")
        return repo
    v.sha = git(repo, "rev-parse", "--verify", f"{v.rev}^{{commit}}")
    v.subject = git(repo, "log", "-1", "--format=%s", v.sha)
    src = os.path.join(work, "src", v.sha[:12])
    if not os.path.isdir(src):
        tmp = src + ".tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        archive = subprocess.Popen(["git", "-C", repo, "archive", v.sha], stdout=subprocess.PIPE)
        subprocess.run(["tar", "-x", "-C", tmp], stdin=archive.stdout, check=True)
        if archive.wait() != 0:
            sys.exit(f"regress: git archive {v.sha} failed")
        os.rename(tmp, src)
    return src


def target_dir(work, v):
    """The cargo target dir of `v`'s configuration: one for the working tree, one shared by
    fixed revisions (they must not share with `.`, whose files are not touched)."""
    return os.path.join(work, "target", v.config_slug() + ("" if v.rev == "." else "-revs"))


def touch_tree(src):
    """Sets every file's mtime under `src` to now (see the layout note above)."""
    now = time.time()
    for root, _, files in os.walk(src):
        for f in files:
            os.utime(os.path.join(root, f), (now, now), follow_symlinks=False)


class BuildFailed(Exception):
    """A variant that did not build: regress.py reports it and goes on without it."""


def build(repo, work, v, rebuild=False, worktree_target=None, log=sys.stderr):
    """Builds `v` if needed; sets v.binary. Raises BuildFailed (with cargo's last output) if
    the build fails.
    `worktree_target`: the cargo target dir for working-tree variants (CI passes the
    checkout's own `target`, which its tests have just built), instead of one under `work`."""
    if v.binary:
        if not os.access(v.binary, os.X_OK):
            sys.exit(f"regress: {v.binary} is not an executable")
        return
    src = source_tree(repo, work, v)
    key = ("worktree" if v.rev == "." else v.sha[:12]) + "-" + v.config_slug()
    out_bin = os.path.join(work, "bin", key, "talus")
    if v.rev != "." and os.access(out_bin, os.X_OK) and not rebuild:
        v.binary = out_bin
        print(f"build {v.label}: reusing {out_bin}", file=log)
        return
    target = target_dir(work, v)
    if v.rev != ".":
        touch_tree(src)
    if v.rev == "." and worktree_target:
        if v.rustflags or v.features or v.settings:
            sys.exit(f"regress: --worktree-target is for plain profiles (it would rebuild "
                     f"{worktree_target} with other flags); {v.label} has features, RUSTFLAGS "
                     f"or profile settings")
        target = os.path.abspath(worktree_target)
    cmd = ["cargo", "build", "--profile", v.profile, "-p", "talus-cli", "--bin", "talus"]
    if v.features:
        cmd += ["--features", ",".join(v.features)]
    cmd += profile_overrides(repo, src, v.profile)
    for k, val in v.settings:
        cmd += ["--config", f"profile.{v.profile}.{k}={toml_value(val)}"]
    env = dict(os.environ, CARGO_TARGET_DIR=target, RUSTFLAGS=v.rustflags,
               CARGO_TERM_COLOR="never")
    env.pop("CARGO_ENCODED_RUSTFLAGS", None)
    flags = f" RUSTFLAGS={v.rustflags!r}" if v.rustflags else ""
    print(f"build {v.label}: {' '.join(cmd)}{flags} (in {src}, target {target})", file=log,
          flush=True)
    t0 = time.monotonic()
    p = subprocess.run(cmd, cwd=src, env=env, capture_output=True, text=True)
    v.build_secs = time.monotonic() - t0
    if p.returncode != 0:
        raise BuildFailed(f"building {v.label} ({v.spec}) failed:\n{p.stderr[-4000:]}")
    built = os.path.join(target, profile_dir(v.profile), "talus")
    os.makedirs(os.path.dirname(out_bin), exist_ok=True)
    shutil.copy2(built, out_bin + ".tmp")
    os.replace(out_bin + ".tmp", out_bin)
    v.binary = out_bin
    print(f"build {v.label}: {v.build_secs:.0f} s -> {out_bin}", file=log, flush=True)
