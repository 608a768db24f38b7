//! Whether a `--steps` list can run, decided before anything is created: a pure function of
//! the steps, `--secondary_indexes` and (for a list without `l.i0`) the secondary indexes the
//! tables in `--db` already have. Called by [`super::config::parse`] (with `l.i0` the tables
//! start new, without indexes) and by [`super::run`] once it has opened an existing database.
//!
//! The rules: `l.i0` creates the tables, so it comes first and once; `l.x` builds the
//! `--secondary_indexes` indexes once, on tables that have none; every step that writes or
//! queries with indexes (`l.i1`, `l.i2`, the q steps) must find exactly `--secondary_indexes`
//! of them, so a run that asks for 3 indexes and never builds them is refused, naming `l.x`,
//! instead of measuring a PK-only table (issue 35); the q steps need at least one.

/// One benchmark step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Insert `--num` rows per client in PK order, no secondary indexes (creates the tables).
    LoadI0,
    /// Create the three secondary indexes.
    CreateIndexes,
    /// Insert `--num_i1` more rows per client with index maintenance.
    LoadI1,
    /// Insert `--num_i2` more rows per client, deleting `--deletes_per_insert_i2` rows from
    /// the PK tail per row inserted (the benchmark's second insert step).
    LoadI2,
    /// Range queries flat out while a background writer inserts this many rows/s per client.
    Query(u32),
}

impl Step {
    /// The step's name as given in `--steps` (`l.i0`, `q100`, ...).
    pub fn name(self) -> String {
        match self {
            Step::LoadI0 => "l.i0".into(),
            Step::CreateIndexes => "l.x".into(),
            Step::LoadI1 => "l.i1".into(),
            Step::LoadI2 => "l.i2".into(),
            Step::Query(r) => format!("q{r}"),
        }
    }

    pub(super) fn parse(s: &str) -> Option<Step> {
        match s {
            "l.i0" => Some(Step::LoadI0),
            "l.x" => Some(Step::CreateIndexes),
            "l.i1" => Some(Step::LoadI1),
            "l.i2" => Some(Step::LoadI2),
            "q100" => Some(Step::Query(100)),
            "q500" => Some(Step::Query(500)),
            "q1000" => Some(Step::Query(1000)),
            _ => None,
        }
    }
}

/// `Err` (naming the step and what to change) if `steps` cannot run with `secondary_indexes`
/// indexes when the tables start with `start` secondary indexes (`None`: not known yet, a list
/// without `l.i0` before the database is opened: only what needs no count is checked).
pub fn check(steps: &[Step], secondary_indexes: usize, start: Option<usize>) -> Result<(), String> {
    let k = secondary_indexes;
    if let Some(i) = steps.iter().position(|s| *s == Step::LoadI0) {
        if i > 0 {
            let first = steps.first().map(|s| s.name()).unwrap_or_default();
            return Err(format!(
                "--steps: l.i0 creates the tables, so it must be the first step ({first} comes \
                 before it)"
            ));
        }
        if steps.iter().filter(|s| **s == Step::LoadI0).count() > 1 {
            return Err("--steps: l.i0 appears twice (it creates the tables once)".into());
        }
    }
    if steps.iter().filter(|s| **s == Step::CreateIndexes).count() > 1 {
        return Err("--steps: l.x appears twice (it builds the indexes once)".into());
    }
    if k == 0 && steps.iter().any(|s| matches!(s, Step::Query(_))) {
        return Err(
            "invalid value \"0\" for flag --secondary_indexes: expected at least 1 with a query \
             step (q100, q500, q1000 query the secondary indexes)"
                .into(),
        );
    }
    let mut built = start;
    for (i, step) in steps.iter().enumerate() {
        match step {
            Step::LoadI0 => built = Some(0),
            Step::CreateIndexes => {
                if let Some(b) = built.filter(|&b| b > 0) {
                    return Err(format!(
                        "--steps: l.x would build indexes on tables that already have {b} \
                         secondary indexes: drop l.x"
                    ));
                }
                built = Some(k);
            }
            Step::LoadI1 | Step::LoadI2 | Step::Query(_) => match built {
                Some(0) if k > 0 => {
                    let later = steps.get(i..).is_some_and(|r| r.contains(&Step::CreateIndexes));
                    return Err(if later {
                        format!(
                            "--steps: {} comes before l.x, so it would run without the {k} \
                             secondary indexes: move l.x before it, or give \
                             --secondary_indexes=0 for a PK-only run",
                            step.name()
                        )
                    } else {
                        format!(
                            "--secondary_indexes={k}, but no step builds them: l.x is missing \
                             before {} (e.g. --steps=l.i0,l.x,l.i1), or give \
                             --secondary_indexes=0 for a PK-only run",
                            step.name()
                        )
                    });
                }
                Some(b) if b != k => {
                    return Err(format!(
                        "--steps: {} would run with the tables' {b} secondary indexes, not \
                         --secondary_indexes={k}: give --secondary_indexes={b}",
                        step.name()
                    ));
                }
                _ => {}
            },
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use Step::*;

    #[test]
    fn good_lists_pass() {
        for (steps, k) in [
            (vec![LoadI0, CreateIndexes, LoadI1, Query(100), Query(500)], 3),
            (vec![LoadI0, CreateIndexes, LoadI1, LoadI2], 1),
            (vec![LoadI0, LoadI1], 0),
            (vec![LoadI0, CreateIndexes, LoadI1], 0),
            (vec![LoadI0], 3),
        ] {
            assert_eq!(check(&steps, k, None), Ok(()), "{steps:?} k={k}");
        }
        assert_eq!(check(&[Query(100)], 3, None), Ok(()), "count unknown yet");
        assert_eq!(check(&[LoadI1, Query(100)], 2, Some(2)), Ok(()));
        assert_eq!(check(&[CreateIndexes, LoadI1], 3, Some(0)), Ok(()));
    }

    #[test]
    fn bad_lists_name_the_step() {
        for (steps, k, start, want) in [
            (vec![Query(100), LoadI0], 3, None, "l.i0 creates the tables"),
            (vec![CreateIndexes, LoadI0], 3, None, "must be the first step (l.x comes"),
            (vec![LoadI0, LoadI0], 3, None, "l.i0 appears twice"),
            (vec![LoadI0, CreateIndexes, CreateIndexes], 3, None, "l.x appears twice"),
            (vec![LoadI0, LoadI1], 3, None, "l.x is missing before l.i1"),
            (vec![LoadI0, Query(100)], 1, None, "l.x is missing before q100"),
            (vec![LoadI0, LoadI1, CreateIndexes], 3, None, "l.i1 comes before l.x"),
            (vec![LoadI0, CreateIndexes, Query(100)], 0, None, "--secondary_indexes"),
            (vec![LoadI1], 3, Some(0), "l.x is missing before l.i1"),
            (vec![LoadI1], 3, Some(1), "give --secondary_indexes=1"),
            (vec![CreateIndexes, LoadI1], 3, Some(3), "drop l.x"),
        ] {
            let e = check(&steps, k, start).unwrap_err();
            assert!(e.contains(want), "{steps:?} k={k} start={start:?}: {e}");
        }
    }
}
