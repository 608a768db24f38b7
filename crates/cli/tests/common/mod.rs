//! Helpers shared by the CLI's integration tests (each test file that needs them says
//! `mod common;`): rendering a report page in headless Chromium and reading its pixels here;
//! running the tools against databases and snapshotting directories in [`disk`].

#![allow(dead_code)]

pub mod disk;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The `chromium` (or `chromium-browser`) binary on PATH, if any.
pub fn chromium() -> Option<PathBuf> {
    for name in ["chromium", "chromium-browser"] {
        for dir in std::env::var("PATH").unwrap_or_default().split(':') {
            let p = Path::new(dir).join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// Screenshots `page` with headless Chromium at 1200 x `height`; returns RGBA pixels and the
/// width.
pub fn screenshot(bin: &Path, page: &Path, dir: &Path, height: u32) -> (Vec<u8>, usize) {
    let png_path = dir.join("shot.png");
    let mut child = Command::new(bin)
        .args(["--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars"])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .arg(format!("--screenshot={}", png_path.display()))
        .arg(format!("--window-size=1200,{height}"))
        .arg(format!("file://{}", page.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("starting chromium");
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("chromium did not finish in 180 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let decoder = png::Decoder::new(std::fs::File::open(&png_path).expect("no screenshot"));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    let channels = match info.color_type {
        png::ColorType::Rgba => 4,
        png::ColorType::Rgb => 3,
        other => panic!("unexpected PNG color type {other:?}"),
    };
    let rgba = buf.chunks(channels).flat_map(|p| [p[0], p[1], p[2], 255]).collect();
    (rgba, info.width as usize)
}

/// How many pixels of `px` (RGBA) are within 12 per channel of `hex` (`#rrggbb`).
pub fn count_color(px: &[u8], hex: &str) -> usize {
    let c: Vec<u8> =
        (0..3).map(|i| u8::from_str_radix(&hex[1 + 2 * i..3 + 2 * i], 16).unwrap()).collect();
    px.chunks(4).filter(|p| (0..3).all(|i| (i32::from(p[i]) - i32::from(c[i])).abs() <= 12)).count()
}

/// Non-white pixels of `px` (RGBA).
pub fn non_white(px: &[u8]) -> usize {
    px.chunks(4).filter(|p| p[0] < 240 || p[1] < 240 || p[2] < 240).count()
}

/// The value of attribute `name` in an opening tag.
pub fn attr(tag: &str, name: &str) -> Option<String> {
    let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    Some(tag[start..].split('"').next()?.to_string())
}

/// Every `<tag ...>` opening tag in `html`.
pub fn tags<'a>(html: &'a str, tag: &str) -> Vec<&'a str> {
    html.match_indices(&format!("<{tag} "))
        .map(|(i, _)| &html[i..i + html[i..].find('>').unwrap()])
        .collect()
}
