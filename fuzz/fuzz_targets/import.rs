//! Fuzz the import parsers users feed files to: `.npy` (npyz behind the header guard), CSV
//! and JSON matrices, CSV and GeoJSON spaces. None may panic; each either reads the bytes or
//! returns an input error. Small limits keep every accepted input cheap.
#![no_main]
use libfuzzer_sys::fuzz_target;
use mdp::import;
use mdp::io::Limits;

fuzz_target!(|data: &[u8]| {
    let limits = Limits {
        max_entries: 4096,
        ..Limits::default()
    };
    let Some((&which, bytes)) = data.split_first() else {
        return;
    };
    match which % 4 {
        0 => {
            let _ = import::matrix_from_npy(bytes, "f.npy", &limits, &import::any_entry);
        }
        1 => {
            let _ = import::matrix_from_csv(bytes, "f.csv", &limits, &import::non_negative_entry);
        }
        2 => {
            let _ = import::space_from_csv(bytes, "f.csv", None, &limits);
        }
        _ => {
            let _ = import::matrix_from_json(bytes, "f.json", &limits, &import::any_entry);
            if let Ok(v) = serde_json::from_slice::<serde_json::Value>(bytes) {
                let _ = import::space_from_geojson(&v, "f.geojson", None, &limits);
            }
        }
    }
});
