//! The fuzzing harness that the test command runs: for one target (a function over bytes that
//! panics when it finds a defect), every input of its seed corpus (`fuzz/seeds/<target>/`) and
//! of its regressions (`fuzz/regressions/<target>/`, inputs that once failed), then mutations
//! of them for a bounded time.
//!
//! It runs on stable Rust with no instrumentation: mutations are blind (bit flips, byte
//! changes, deletions, duplications, splices of other corpus inputs, a chunk repeated up to a
//! few thousand times for deep nesting), not coverage-guided, so its strength is in the seeds,
//! which hold every construct of each format. A seed run is repeatable: `BEELINE_FUZZ_SEED`
//! replays one.
//!
//! - `BEELINE_FUZZ_SECONDS` sets each target's time (default [`DEFAULT_SECONDS`]);
//!   `./scripts/fuzz` runs every target for as long as asked.
//! - An input that panics, or takes longer than [`SLOW`], is written to
//!   `fuzz/findings/<target>/` (git-ignored) and fails the run, saying where it is; moved to
//!   `fuzz/regressions/<target>/`, it is run first by every later run.
//! - Each run prints `fuzz <target>: N executions in S s (...)`.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Each target's time in the test command.
pub const DEFAULT_SECONDS: f64 = 3.0;
/// An input slower than this is a finding (a hang or an exponential case).
pub const SLOW: Duration = Duration::from_secs(5);
/// Inputs grow no larger than this.
pub const MAX_LEN: usize = 256 * 1024;

/// What a run did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub target: String,
    pub executions: u64,
    pub seeds: usize,
    pub regressions: usize,
    pub elapsed: Duration,
    pub seed: u64,
}

/// `fuzz/` at the repository's root: from the crate's directory as cargo gives it to the
/// running test or binary, else as it was when compiled (a build directory shared between
/// checkouts may hold a binary compiled in another one).
pub fn root() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf())
        .join("../../fuzz")
}

/// Every file under `dir`, sorted by name (none when it does not exist).
pub fn inputs(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(bytes) = std::fs::read(&path) {
                files.push((path, bytes));
            }
        }
    }
    files.sort();
    files
}

fn seconds() -> f64 {
    std::env::var("BEELINE_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_SECONDS)
}

fn run_seed() -> u64 {
    std::env::var("BEELINE_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        })
}

/// Runs `target` over the corpus of `name`, then over mutations for the configured time.
/// Panics (failing the test) when an input fails, after saving it.
pub fn fuzz(name: &str, target: impl FnMut(&[u8])) -> Report {
    fuzz_in(
        &root(),
        name,
        Vec::new(),
        Duration::from_secs_f64(seconds()),
        target,
    )
}

/// [`fuzz`] with more seeds: `extra` (such as [`shared_corpus`]'s files) join the corpus.
pub fn fuzz_with(name: &str, extra: Vec<Vec<u8>>, target: impl FnMut(&[u8])) -> Report {
    fuzz_in(
        &root(),
        name,
        extra,
        Duration::from_secs_f64(seconds()),
        target,
    )
}

/// The files ending in `extension` under `../shared/corpora/<dir>` beside the repository (real
/// models, not part of it); none, saying so, where it is absent.
pub fn shared_corpus(dir: &str, extension: &str) -> Vec<Vec<u8>> {
    let path = root().join("../../shared/corpora").join(dir);
    let files: Vec<Vec<u8>> = inputs(&path)
        .into_iter()
        .filter(|(path, _)| path.extension().is_some_and(|e| e == extension))
        .map(|(_, bytes)| bytes)
        .collect();
    if files.is_empty() {
        println!(
            "note: {} is absent; fuzzing with the repository's seeds only",
            path.display()
        );
    }
    files
}

/// [`fuzz`] with its directory, extra seeds and time given.
#[allow(
    clippy::panic,
    reason = "a failing input fails the test that runs the harness"
)]
pub fn fuzz_in(
    root: &Path,
    name: &str,
    extra: Vec<Vec<u8>>,
    budget: Duration,
    mut target: impl FnMut(&[u8]),
) -> Report {
    let seed = run_seed() | 1;
    let seeds = inputs(&root.join("seeds").join(name));
    let regressions = inputs(&root.join("regressions").join(name));
    assert!(
        !seeds.is_empty(),
        "fuzz {name}: no seed corpus in {}",
        root.join("seeds").join(name).display()
    );
    let started = Instant::now();
    let mut executions = 0u64;
    let mut one = |input: &[u8], executions: &mut u64| {
        *executions += 1;
        let began = Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(|| target(input)));
        let took = began.elapsed();
        let failure = match outcome {
            Err(panic) => Some(panic_text(&*panic)),
            Ok(()) if took > SLOW => Some(format!("took {} ms", took.as_millis())),
            Ok(()) => None,
        };
        if let Some(failure) = failure {
            let saved = save(root, name, input);
            panic!(
                "fuzz {name}: an input failed ({failure}) after {executions} executions, seed \
                 {seed}; saved as {saved}; move it to fuzz/regressions/{name}/ to keep it as a \
                 regression test.\ninput ({} bytes): {}",
                input.len(),
                preview(input)
            );
        }
    };
    let extras = extra.len();
    let corpus: Vec<Vec<u8>> = seeds
        .iter()
        .chain(&regressions)
        .map(|(_, bytes)| bytes.clone())
        .chain(extra)
        .collect();
    for input in &corpus {
        one(input, &mut executions);
    }
    let mut rng = Rng(seed);
    let mut current = Vec::new();
    while started.elapsed() < budget {
        // Half the time the last input mutated further, so mutations pile up; else a corpus
        // input afresh.
        if current.is_empty() || rng.below(2) == 0 {
            current = corpus[rng.below(corpus.len())].clone();
        }
        mutate(&mut rng, &mut current, &corpus);
        one(&current, &mut executions);
    }
    let report = Report {
        target: name.to_owned(),
        executions,
        seeds: seeds.len(),
        regressions: regressions.len(),
        elapsed: started.elapsed(),
        seed,
    };
    println!(
        "fuzz {name}: {} executions in {:.1} s ({} seeds, {extras} from the shared corpora, {} \
         regressions; seed {seed}), nothing found",
        report.executions,
        report.elapsed.as_secs_f64(),
        report.seeds,
        report.regressions
    );
    report
}

fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = panic.downcast_ref::<&str>() {
        format!("panicked: {text}")
    } else if let Some(text) = panic.downcast_ref::<String>() {
        format!("panicked: {text}")
    } else {
        "panicked".to_owned()
    }
}

/// Writes a failing input under `fuzz/findings/<name>/`, named by its hash; the path, or why
/// it could not be written.
fn save(root: &Path, name: &str, input: &[u8]) -> String {
    let dir = root.join("findings").join(name);
    let path = dir.join(format!("{:016x}", fnv1a(input)));
    match std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, input)) {
        Ok(()) => path.display().to_string(),
        Err(e) => format!("(not saved: {e})"),
    }
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The input as text when it is short text, else its start in Rust's escapes.
fn preview(input: &[u8]) -> String {
    let shown = &input[..input.len().min(2048)];
    let text: String = shown.escape_ascii().to_string();
    if input.len() > shown.len() {
        format!("{text}...")
    } else {
        text
    }
}

/// xorshift64*: small, fast and repeatable from its seed.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        (self.next_u64() % n as u64) as usize
    }
}

/// Bytes that parsers treat specially, for the byte-setting mutation.
const INTERESTING: &[u8] = b"\0\x01\x7f\x80\xff<>/=\"'&;{}[](),.:-+*?!0123456789eE \t\n\\#@$%_";

/// Numbers and words that reach edge cases when spliced in.
const TOKENS: &[&[u8]] = &[
    b"-1",
    b"0",
    b"9223372036854775807",
    b"-9223372036854775808",
    b"18446744073709551616",
    b"1e400",
    b"-0.0",
    b"NaN",
    b"null",
    b"true",
    b"\"\"",
    b"\\u0000",
    b"\xef\xbb\xbf",
    b"\xf0\x9f\x90\x9d",
    b"&#0;",
    b"&amp;",
    b"<![CDATA[",
    b"]]>",
    b"<!--",
    b"-->",
    b"<!DOCTYPE x [<!ENTITY a \"aaaa\">]>",
];

/// Changes `input` in place by one to four mutations; keeps it within [`MAX_LEN`].
pub fn mutate(rng: &mut Rng, input: &mut Vec<u8>, corpus: &[Vec<u8>]) {
    for _ in 0..=rng.below(4) {
        let len = input.len();
        match rng.below(10) {
            0 if len > 0 => {
                let at = rng.below(len);
                input[at] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let at = rng.below(len);
                input[at] = INTERESTING[rng.below(INTERESTING.len())];
            }
            2 => {
                let at = rng.below(len + 1);
                input.insert(at, INTERESTING[rng.below(INTERESTING.len())]);
            }
            3 if len > 0 => {
                let at = rng.below(len);
                let end = (at + 1 + rng.below(32)).min(len);
                input.drain(at..end);
            }
            4 if len > 0 => {
                let (at, end) = range(rng, len, 64);
                let chunk = input[at..end].to_vec();
                let to = rng.below(len + 1);
                input.splice(to..to, chunk);
            }
            5 => {
                let other = &corpus[rng.below(corpus.len())];
                if !other.is_empty() {
                    let (at, end) = range(rng, other.len(), 256);
                    let to = rng.below(len + 1);
                    input.splice(to..to, other[at..end].iter().copied());
                }
            }
            6 if len > 0 => {
                let other = &corpus[rng.below(corpus.len())];
                if !other.is_empty() {
                    let (at, end) = range(rng, len, 64);
                    let (from, until) = range(rng, other.len(), 64);
                    input.splice(at..end, other[from..until].iter().copied());
                }
            }
            7 if len > 0 => input.truncate(rng.below(len)),
            8 => {
                let token = TOKENS[rng.below(TOKENS.len())];
                let to = rng.below(len + 1);
                input.splice(to..to, token.iter().copied());
            }
            9 if len > 0 => {
                // Deep nesting and long runs: a short chunk repeated many times.
                let (at, end) = range(rng, len, 8);
                let most = if rng.below(8) == 0 { 5000 } else { 64 };
                let times = 1 + rng.below(most);
                let chunk = input[at..end].repeat(times);
                let to = rng.below(len + 1);
                input.splice(to..to, chunk);
            }
            _ => {}
        }
        input.truncate(MAX_LEN);
    }
}

/// A non-empty range of at most `max` within `0..len` (`len` > 0).
fn range(rng: &mut Rng, len: usize, max: usize) -> (usize, usize) {
    let at = rng.below(len);
    let end = (at + 1 + rng.below(max)).min(len);
    (at, end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failing_input_is_saved_and_named_and_the_corpus_runs_first() {
        let dir = std::env::temp_dir().join(format!("beeline-fuzz-test-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("seeds/t")).unwrap();
        std::fs::write(dir.join("seeds/t/one"), b"hello").unwrap();
        let mut seen = Vec::new();
        let report = fuzz_in(&dir, "t", Vec::new(), Duration::from_millis(50), |input| {
            seen.push(input.to_vec())
        });
        assert_eq!(seen[0], b"hello");
        assert!(report.executions > 10, "{report:?}");
        assert_eq!(report.executions as usize, seen.len());
        assert!(seen.iter().any(|input| input != b"hello"), "it mutates");

        let failed = catch_unwind(|| {
            fuzz_in(&dir, "t", Vec::new(), Duration::from_secs(5), |input| {
                assert!(!input.contains(&b'!'), "an exclamation mark")
            })
        });
        let message = panic_text(&*failed.unwrap_err());
        assert!(message.contains("an exclamation mark"), "{message}");
        assert!(message.contains("findings/t/"), "{message}");
        let found = inputs(&dir.join("findings/t"));
        assert_eq!(found.len(), 1);
        assert!(found[0].1.contains(&b'!'));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn mutations_stay_within_the_size_limit() {
        let mut rng = Rng(7);
        let corpus = vec![vec![b'x'; 1000]];
        let mut input = corpus[0].clone();
        for _ in 0..10_000 {
            mutate(&mut rng, &mut input, &corpus);
            assert!(input.len() <= MAX_LEN);
        }
    }
}
