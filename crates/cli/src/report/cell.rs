//! How the report pages print a number in a table cell (shared by every section, so the
//! sections need not import the page that lays them out).

/// A number for a table cell: whole above 100, else up to 3 decimals; `-` if absent.
pub fn cell(v: Option<f64>) -> String {
    match v {
        Some(x) if x.abs() >= 100.0 => format!("{x:.0}"),
        Some(x) => format!("{x:.3}").trim_end_matches('0').trim_end_matches('.').to_string(),
        None => "-".into(),
    }
}
