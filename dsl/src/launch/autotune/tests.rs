//! The tuner's choices, memory and file caches, with measured times given by the tests (the
//! CUDA-event timing itself runs only on a GPU).

use super::*;
use std::cell::RefCell;

const CANDIDATES: &[&str] = &[
    "BM = 64, num_warps = 4",
    "BM = 128, num_warps = 8",
    "BM = 256, num_warps = 8",
];

fn tuner() -> Autotuner {
    Autotuner::new("k[T = f16]", 0xfeed, &["m", "n"], CANDIDATES)
}

fn gpu(name: &str) -> TuneTarget {
    TuneTarget::Gpu(name.to_string())
}

fn key(m: i32, n: i32) -> Vec<String> {
    vec![m.to_string(), n.to_string()]
}

/// A fresh cache path in the temporary directory (removed first).
fn cache_path(name: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!(
        "tessera-autotune-{name}-{}.cache",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&path);
    path
}

fn memory_only() -> TuneSettings {
    TuneSettings::default()
}

/// Settings with the cache file `path`, without the log.
fn file_settings(path: &Path) -> TuneSettings {
    TuneSettings {
        cache_file: Some(path.to_path_buf()),
        log: false,
        time_emulator: false,
    }
}

/// A measurement giving candidate `i` the time (ms) or failure `times[i]`.
fn timings<'a>(times: &'a [Result<f64, &str>]) -> impl Fn(usize) -> Result<f64, LaunchError> + 'a {
    move |i: usize| {
        times[i].map_err(|reason| LaunchError::InvalidConfig {
            kernel: "k".to_string(),
            reason: reason.to_string(),
        })
    }
}

#[test]
fn the_fastest_candidate_is_chosen_and_remembered() {
    let tuner = tuner();
    let calls = RefCell::new(Vec::new());
    let measure = |i: usize| {
        calls.borrow_mut().push(i);
        Ok([0.5, 0.2, 0.3][i])
    };
    let choice = tuner
        .choose_in(&gpu("A"), &key(64, 64), &memory_only(), measure)
        .unwrap();
    assert_eq!((choice.index, choice.source), (1, ChoiceSource::Timed));
    assert_eq!(choice.candidate, CANDIDATES[1]);
    assert_eq!(choice.results.len(), 3);
    assert_eq!(choice.results[2].outcome, Ok(0.3));
    assert_eq!(*calls.borrow(), vec![0, 1, 2]);
    // The second launch with the same key on the same device times nothing.
    let again = tuner
        .choose_in(&gpu("A"), &key(64, 64), &memory_only(), |_| {
            panic!("timed again")
        })
        .unwrap();
    assert_eq!((again.index, again.source), (1, ChoiceSource::Memory));
    assert!(again.results.is_empty());
}

#[test]
fn keys_and_devices_are_tuned_separately() {
    let tuner = tuner();
    let on = |target: &TuneTarget, k: Vec<String>, times: [f64; 3]| {
        tuner
            .choose_in(target, &k, &memory_only(), |i| Ok(times[i]))
            .unwrap()
    };
    assert_eq!(on(&gpu("A"), key(64, 64), [0.1, 0.2, 0.3]).index, 0);
    assert_eq!(on(&gpu("A"), key(64, 128), [0.3, 0.2, 0.1]).index, 2);
    assert_eq!(on(&gpu("B"), key(64, 64), [0.3, 0.1, 0.2]).index, 1);
    // Each remembered on its own.
    let remembered = |target: &TuneTarget, k: Vec<String>| {
        let c = tuner
            .choose_in(target, &k, &memory_only(), |_| panic!("timed again"))
            .unwrap();
        assert_eq!(c.source, ChoiceSource::Memory);
        c.index
    };
    assert_eq!(remembered(&gpu("A"), key(64, 64)), 0);
    assert_eq!(remembered(&gpu("A"), key(64, 128)), 2);
    assert_eq!(remembered(&gpu("B"), key(64, 64)), 1);
    tuner.forget();
    assert_eq!(
        on(&gpu("A"), key(64, 64), [0.3, 0.2, 0.1]).source,
        ChoiceSource::Timed
    );
}

#[test]
fn ties_go_to_the_earlier_candidate() {
    let tuner = tuner();
    let c = tuner
        .choose_in(&gpu("A"), &key(1, 1), &memory_only(), |i| {
            Ok([0.2, 0.1, 0.1][i])
        })
        .unwrap();
    assert_eq!(c.index, 1);
}

#[test]
fn a_candidate_that_fails_is_skipped_and_reported() {
    let tuner = tuner();
    let times = [Err("needs 300 KB of shared memory"), Ok(0.4), Ok(0.6)];
    let measure = timings(&times);
    let c = tuner
        .choose_in(&gpu("A"), &key(8, 8), &memory_only(), measure)
        .unwrap();
    assert_eq!(c.index, 1);
    let skipped = c.results[0].outcome.as_ref().unwrap_err();
    assert!(
        skipped.contains("needs 300 KB of shared memory"),
        "{skipped}"
    );
}

#[test]
fn no_candidate_running_is_an_error_naming_each() {
    let tuner = tuner();
    let times = [
        Err("too many registers"),
        Err("launch failed"),
        Err("too much shared"),
    ];
    let measure = timings(&times);
    let err = tuner
        .choose_in(&gpu("A"), &key(8, 8), &memory_only(), measure)
        .unwrap_err()
        .to_string();
    for part in [
        "m=8 n=8",
        "no candidate ran",
        "too many registers",
        "launch failed",
        "BM = 256",
    ] {
        assert!(err.contains(part), "{part} missing from: {err}");
    }
    // Nothing was remembered: the next launch tunes again.
    let c = tuner
        .choose_in(&gpu("A"), &key(8, 8), &memory_only(), |_| Ok(1.0))
        .unwrap();
    assert_eq!(c.source, ChoiceSource::Timed);
}

#[test]
fn the_emulator_takes_the_first_candidate_and_never_times() {
    let tuner = tuner();
    for k in [key(1, 1), key(4096, 17)] {
        let c = tuner
            .choose_in(&TuneTarget::Emulator, &k, &memory_only(), |_| {
                panic!("the emulator timed")
            })
            .unwrap();
        assert_eq!((c.index, c.source), (0, ChoiceSource::Emulator));
    }
}

#[test]
fn the_emulator_tunes_like_a_gpu_when_asked() {
    let tuner = tuner();
    let timed = TuneSettings {
        time_emulator: true,
        ..memory_only()
    };
    let c = tuner
        .choose_in(&TuneTarget::Emulator, &key(2, 2), &timed, |i| {
            Ok([0.3, 0.1, 0.2][i])
        })
        .unwrap();
    assert_eq!((c.index, c.source), (1, ChoiceSource::Timed));
    assert_eq!(c.results.len(), 3);
    let c = tuner
        .choose_in(&TuneTarget::Emulator, &key(2, 2), &timed, |_| {
            panic!("timed twice")
        })
        .unwrap();
    assert_eq!((c.index, c.source), (1, ChoiceSource::Memory));
    // Without the setting the rule is the first candidate again, whatever was remembered.
    let c = tuner
        .choose_in(&TuneTarget::Emulator, &key(2, 2), &memory_only(), |_| {
            panic!("the emulator timed")
        })
        .unwrap();
    assert_eq!((c.index, c.source), (0, ChoiceSource::Emulator));
}

#[test]
fn the_cache_file_round_trips_between_tuners() {
    let path = cache_path("round-trip");
    let settings = file_settings(&path);
    let first = tuner();
    let c = first
        .choose_in(&gpu("H100"), &key(4096, 4096), &settings, |i| {
            Ok([0.3, 0.1, 0.2][i])
        })
        .unwrap();
    assert_eq!((c.index, c.source), (1, ChoiceSource::Timed));
    let c = first
        .choose_in(&gpu("H100"), &key(1024, 1024), &settings, |i| {
            Ok([0.1, 0.3, 0.2][i])
        })
        .unwrap();
    assert_eq!(c.index, 0);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with(CACHE_HEADER), "{text}");
    assert!(
        text.contains(
            "k[T = f16]\t000000000000feed\tH100\tm=4096 n=4096\tBM = 128, num_warps = 8\t0.1\n"
        ),
        "{text}"
    );
    // A new process (a new tuner) reads both choices and times nothing.
    let second = tuner();
    for (k, want) in [(key(4096, 4096), 1), (key(1024, 1024), 0)] {
        let c = second
            .choose_in(&gpu("H100"), &k, &settings, |_| {
                panic!("timed despite the file")
            })
            .unwrap();
        assert_eq!((c.index, c.source), (want, ChoiceSource::File));
    }
    // Another device, another fingerprint (an edited kernel) and another kernel are not hits.
    let edited = Autotuner::new("k[T = f16]", 0xbeef, &["m", "n"], CANDIDATES);
    let other = Autotuner::new("k[T = bf16]", 0xfeed, &["m", "n"], CANDIDATES);
    for (t, target) in [
        (&second, gpu("A100")),
        (&edited, gpu("H100")),
        (&other, gpu("H100")),
    ] {
        let c = t
            .choose_in(&target, &key(4096, 4096), &settings, |_| Ok(1.0))
            .unwrap();
        assert_eq!(
            c.source,
            ChoiceSource::Timed,
            "{:?} on {target:?}",
            t.kernel()
        );
    }
    let file = CacheFile::read(&path).unwrap();
    assert_eq!(file.entries.len(), 5);
    let _ = std::fs::remove_file(&path);
}

#[test]
fn a_cached_winner_that_is_no_longer_a_candidate_is_retuned() {
    let path = cache_path("stale-winner");
    let mut file = CacheFile::default();
    file.insert(CacheEntry {
        kernel: "k[T = f16]".to_string(),
        fingerprint: 0xfeed,
        device: "A".to_string(),
        key: "m=1 n=2".to_string(),
        winner: "BM = 512, num_warps = 16".to_string(),
        median_ms: 0.1,
    });
    file.write(&path).unwrap();
    let settings = file_settings(&path);
    let c = tuner()
        .choose_in(&gpu("A"), &key(1, 2), &settings, |i| Ok([0.3, 0.2, 0.1][i]))
        .unwrap();
    assert_eq!((c.index, c.source), (2, ChoiceSource::Timed));
    // The slot now holds the new winner, not a second line.
    let file = CacheFile::read(&path).unwrap();
    assert_eq!(file.entries.len(), 1);
    assert_eq!(file.entries[0].winner, CANDIDATES[2]);
    let _ = std::fs::remove_file(&path);
}

#[test]
fn a_corrupt_cache_file_is_ignored_and_left_alone() {
    for (name, text) in [
        ("foreign", "fn main() {}\n"),
        ("version", "tessera-autotune-cache 99\nwhatever\n"),
        (
            "line",
            "tessera-autotune-cache 1\nk\tnot-hex\tA\tm=1 n=2\tBM = 64, num_warps = 4\t0.1\n",
        ),
    ] {
        let path = cache_path(name);
        std::fs::write(&path, text).unwrap();
        let settings = file_settings(&path);
        let c = tuner()
            .choose_in(&gpu("A"), &key(1, 2), &settings, |i| Ok([0.3, 0.2, 0.1][i]))
            .unwrap();
        assert_eq!((c.index, c.source), (2, ChoiceSource::Timed), "{name}");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            text,
            "{name}: the file was written"
        );
        let _ = std::fs::remove_file(&path);
    }
}

#[test]
fn cache_errors_say_what_is_wrong() {
    let path = Path::new("cache.txt");
    let err = |text: &str| CacheFile::parse(path, text).unwrap_err().to_string();
    assert!(err("hello\n").contains("is not a Tessera autotuning cache"));
    assert!(err("tessera-autotune-cache 2\n").contains("another version"));
    let line = err("tessera-autotune-cache 1\nk\t00\tA\tkey\n");
    assert!(
        line.contains("cache.txt line 2: 4 tab-separated fields, expected 6"),
        "{line}"
    );
    let median = err("tessera-autotune-cache 1\nk\t00\tA\tkey\tBM = 1\tfast\n");
    assert!(median.contains("median `fast` is not a time"), "{median}");
}

#[test]
fn the_file_format_round_trips() {
    let mut file = CacheFile::default();
    for (i, device) in ["NVIDIA H100 80GB HBM3 (sm_90, PTX sm_90a)", "a\tb"]
        .iter()
        .enumerate()
    {
        file.insert(CacheEntry {
            kernel: "matmul[T = bf16]".to_string(),
            fingerprint: u64::MAX - i as u64,
            device: device.to_string(),
            key: String::new(),
            winner: "BK = 32".to_string(),
            median_ms: 0.015625,
        });
    }
    let parsed = CacheFile::parse(Path::new("x"), &file.render()).unwrap();
    assert_eq!(parsed.entries[0], file.entries[0]);
    // A tab in a field becomes a space (the format's separator).
    assert_eq!(parsed.entries[1].device, "a b");
}

#[test]
fn settings_come_from_the_api_over_the_environment() {
    set_cache_file(Some(PathBuf::from("/tmp/x.cache")));
    set_log(true);
    assert_eq!(
        settings(),
        TuneSettings {
            cache_file: Some(PathBuf::from("/tmp/x.cache")),
            log: true,
            time_emulator: false,
        }
    );
    set_cache_file(None);
    set_log(false);
    assert_eq!(settings(), TuneSettings::default());
}
