//! What users bring: spaces as CSV or GeoJSON files of points (besides the built-in data
//! sets and the JSON forms of [`crate::io`]), mechanism matrices produced elsewhere (numpy
//! `.npy`, JSON, CSV) turned into `mdp/1` documents, and the exact repair of a near-private
//! external matrix (`spec/mechanism-format.md`, "Importing matrices").
//!
//! Every number is read exactly: CSV and JSON literals with [`crate::exact::parse_rational`], `f64` and
//! `f32` array entries as the exact rational value of the float ([`crate::exact::q_from_f64`]). Errors are
//! [`crate::error::InputError`]s whose path names the file and the place, e.g. `pts.csv:row 7, column lat`
//! (CSV rows are the file's line numbers, the header being row 1), `m.npy[2][5]` (0-based
//! matrix indices) or `pts.geojson:features[3].geometry`.

mod matrix;
mod repair;
mod scale;

pub use matrix::*;
pub use mdp_audit::io::space::*;
pub use repair::*;
pub use scale::*;
