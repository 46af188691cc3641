//! The matrix file of the large-mechanism container (`spec/mechanism-format.md`,
//! revision 3): NumPy's `.npy` format restricted to what the container needs, a C-order
//! 2-D array of little-endian float64 (`'<f8'`). Anything else is refused with its reason,
//! before any allocation: the header is at most 10 000 bytes (numpy's own limit), the
//! shape must match what the mechanism's header says, and the file's length must be the
//! header plus exactly rows·cols·8 bytes.

use super::{input_error, InputError};
use std::io::{Read, Seek, Write};

const MAGIC: &[u8; 6] = b"\x93NUMPY";
/// numpy refuses headers longer than this (`numpy.lib.format._MAX_HEADER_SIZE`).
const MAX_HEADER: usize = 10_000;

/// The shape of a `.npy` file's 2-D float64 array, and where its data starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub rows: usize,
    pub cols: usize,
    pub data_offset: usize,
}

fn bad(path: &str, why: impl Into<String>) -> InputError {
    input_error(path, why.into())
}

/// Parse the header from the first bytes of a file (at least `MAX_HEADER` + 12 of them,
/// or the whole file if shorter).
pub fn parse_header(bytes: &[u8], path: &str) -> Result<Header, InputError> {
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        return Err(bad(path, "not a .npy file (no \\x93NUMPY magic)"));
    }
    let (len, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 => {
            if bytes.len() < 12 {
                return Err(bad(path, "truncated .npy header"));
            }
            (
                u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
                12,
            )
        }
        v => return Err(bad(path, format!("unsupported .npy version {v}"))),
    };
    if len > MAX_HEADER {
        return Err(bad(
            path,
            format!(".npy header of {len} bytes (numpy's limit is {MAX_HEADER})"),
        ));
    }
    let text = bytes
        .get(start..start + len)
        .ok_or_else(|| bad(path, "truncated .npy header"))?;
    let text = std::str::from_utf8(text).map_err(|_| bad(path, ".npy header is not text"))?;
    let dict = text.trim_end_matches(['\n', ' ', '\0']).trim();
    let inner = dict
        .strip_prefix('{')
        .and_then(|d| d.strip_suffix('}'))
        .ok_or_else(|| bad(path, ".npy header is not a dictionary"))?;
    let (mut descr, mut fortran, mut shape) = (None, None, None);
    let mut rest = inner.trim();
    while !rest.is_empty() {
        let (key, after) =
            quoted(rest).ok_or_else(|| bad(path, ".npy header: expected a quoted key"))?;
        let after = after
            .trim_start()
            .strip_prefix(':')
            .ok_or_else(|| bad(path, ".npy header: expected ':'"))?
            .trim_start();
        let (value, after) = match key {
            "descr" => {
                let (d, a) =
                    quoted(after).ok_or_else(|| bad(path, ".npy header: descr is not a string"))?;
                (Some(Field::Descr(d.to_string())), a)
            }
            "fortran_order" => {
                if let Some(a) = after.strip_prefix("False") {
                    (Some(Field::Fortran(false)), a)
                } else if let Some(a) = after.strip_prefix("True") {
                    (Some(Field::Fortran(true)), a)
                } else {
                    return Err(bad(path, ".npy header: fortran_order is not True or False"));
                }
            }
            "shape" => {
                let close = after
                    .find(')')
                    .ok_or_else(|| bad(path, ".npy header: shape is not a tuple"))?;
                let tuple = after
                    .strip_prefix('(')
                    .ok_or_else(|| bad(path, ".npy header: shape is not a tuple"))?;
                let dims: Result<Vec<usize>, _> = tuple[..close - 1]
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(|s| s.parse::<usize>())
                    .collect();
                let dims = dims.map_err(|_| bad(path, ".npy header: shape holds a non-integer"))?;
                (Some(Field::Shape(dims)), &after[close + 1..])
            }
            other => return Err(bad(path, format!(".npy header: unexpected key {other:?}"))),
        };
        match value {
            Some(Field::Descr(d)) if descr.is_none() => descr = Some(d),
            Some(Field::Fortran(f)) if fortran.is_none() => fortran = Some(f),
            Some(Field::Shape(s)) if shape.is_none() => shape = Some(s),
            _ => return Err(bad(path, format!(".npy header: key {key:?} repeated"))),
        }
        rest = after.trim_start();
        rest = rest.strip_prefix(',').unwrap_or(rest).trim_start();
    }
    match descr.as_deref() {
        Some("<f8") => {}
        Some(d) => {
            return Err(bad(
                path,
                format!("dtype {d:?}: the container holds little-endian float64 ('<f8')"),
            ))
        }
        None => return Err(bad(path, ".npy header: no descr")),
    }
    if fortran != Some(false) {
        return Err(bad(
            path,
            "the matrix must be in C order (fortran_order False)",
        ));
    }
    match shape.as_deref() {
        Some(&[rows, cols]) => Ok(Header {
            rows,
            cols,
            data_offset: start + len,
        }),
        Some(s) => Err(bad(
            path,
            format!(
                "a {}-dimensional array: the matrix is 2-dimensional",
                s.len()
            ),
        )),
        None => Err(bad(path, ".npy header: no shape")),
    }
}

enum Field {
    Descr(String),
    Fortran(bool),
    Shape(Vec<usize>),
}

/// A single-quoted (or double-quoted) Python string at the start of `s`, and what follows.
fn quoted(s: &str) -> Option<(&str, &str)> {
    let q = s.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let end = s[1..].find(q)? + 1;
    Some((&s[1..end], &s[end + 1..]))
}

/// Read the rows × cols float64 matrix of the `.npy` file at `file`, whose shape must be
/// (rows, cols); `advance` is told the rows read, in blocks.
pub fn read(
    file: &std::path::Path,
    rows: usize,
    cols: usize,
    path: &str,
    advance: &dyn Fn(u64),
) -> Result<Vec<f64>, InputError> {
    let shown = file.display();
    let mut f = open_checked(file, rows, cols, path)?.file;
    let mut data = Vec::with_capacity(rows * cols);
    let mut buf = vec![0u8; (cols * 8).max(8) * 256];
    while data.len() < rows * cols {
        let need = ((rows * cols - data.len()) * 8).min(buf.len());
        f.read_exact(&mut buf[..need])
            .map_err(|e| bad(path, format!("cannot read {shown}: {e}")))?;
        data.extend(
            buf[..need]
                .chunks_exact(8)
                .map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes"))),
        );
        advance((data.len() / cols.max(1)) as u64);
    }
    Ok(data)
}

/// Read columns `c0..c1` of the rows × cols float64 matrix of the `.npy` file at `file`
/// (a block of a distributed audit): the same checks as [`read`], then one read of
/// (c1 − c0)·8 bytes per row.
pub fn read_columns(
    file: &std::path::Path,
    rows: usize,
    cols: usize,
    c0: usize,
    c1: usize,
    path: &str,
) -> Result<Vec<f64>, InputError> {
    let shown = file.display();
    let f = open_checked(file, rows, cols, path)?;
    let (offset, file) = (f.data_offset, f.file.into_inner());
    let width = c1 - c0;
    let mut data = Vec::with_capacity(rows * width);
    let mut buf = vec![0u8; width * 8];
    let io = |e: std::io::Error| bad(path, format!("cannot read {shown}: {e}"));
    for u in 0..rows {
        // One positioned read per row: no seek, no read-ahead buffer to refill (a
        // buffered reader refilled 1 MiB per row here: 30 s for 10⁵ rows).
        let at = offset + ((u * cols + c0) * 8) as u64;
        read_at(&file, &mut buf, at).map_err(io)?;
        data.extend(
            buf.chunks_exact(8)
                .map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes"))),
        );
    }
    Ok(data)
}

#[cfg(unix)]
fn read_at(file: &std::fs::File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, at)
}

#[cfg(not(unix))]
fn read_at(mut file: &std::fs::File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    file.seek(std::io::SeekFrom::Start(at))?;
    file.read_exact(buf)
}

struct Opened {
    file: std::io::BufReader<std::fs::File>,
    data_offset: u64,
}

/// Open a `.npy` file and parse its header: the file, the header and the file's length.
fn open_header(
    file: &std::path::Path,
    path: &str,
) -> Result<(std::fs::File, Header, u64), InputError> {
    let shown = file.display();
    let mut f =
        std::fs::File::open(file).map_err(|e| bad(path, format!("cannot open {shown}: {e}")))?;
    let total = f.metadata().map(|m| m.len()).unwrap_or(0);
    let mut head = vec![0u8; (MAX_HEADER + 12).min(total as usize)];
    f.read_exact(&mut head)
        .map_err(|e| bad(path, format!("cannot read {shown}: {e}")))?;
    let h = parse_header(&head, path)?;
    Ok((f, h, total))
}

/// The shape of the 2-D float64 array of the `.npy` file at `file` (its header only; [`read`]
/// checks the length against it).
pub fn shape(file: &std::path::Path, path: &str) -> Result<Header, InputError> {
    open_header(file, path).map(|(_, h, _)| h)
}

/// Open a `.npy` file, check its header against (rows, cols) and its length, and leave
/// it at the start of the data.
fn open_checked(
    file: &std::path::Path,
    rows: usize,
    cols: usize,
    path: &str,
) -> Result<Opened, InputError> {
    let shown = file.display();
    let (mut f, h, total) = open_header(file, path)?;
    if (h.rows, h.cols) != (rows, cols) {
        return Err(bad(
            path,
            format!(
                "{shown} holds a {} × {} array, the header says {rows} × {cols}",
                h.rows, h.cols
            ),
        ));
    }
    let want = (rows as u64)
        .checked_mul(cols as u64)
        .and_then(|x| x.checked_mul(8))
        .and_then(|x| x.checked_add(h.data_offset as u64));
    if want != Some(total) {
        return Err(bad(
            path,
            format!(
                "{shown} has {total} bytes, a {rows} × {cols} float64 array needs {}",
                want.map_or("more".into(), |w| w.to_string())
            ),
        ));
    }
    f.seek(std::io::SeekFrom::Start(h.data_offset as u64))
        .map_err(|e| bad(path, format!("cannot read {shown}: {e}")))?;
    Ok(Opened {
        file: std::io::BufReader::with_capacity(1 << 20, f),
        data_offset: h.data_offset as u64,
    })
}

/// Write a rows × cols float64 matrix as a version 1.0 `.npy` file.
pub fn write(out: &mut dyn Write, rows: usize, cols: usize, data: &[f64]) -> std::io::Result<()> {
    assert_eq!(data.len(), rows * cols);
    let mut dict =
        format!("{{'descr': '<f8', 'fortran_order': False, 'shape': ({rows}, {cols}), }}");
    // Pad so that the data starts at a multiple of 64 bytes, ending with a newline.
    let unpadded = 10 + dict.len() + 1;
    dict.push_str(&" ".repeat((64 - unpadded % 64) % 64));
    dict.push('\n');
    out.write_all(MAGIC)?;
    out.write_all(&[1, 0])?;
    out.write_all(&(dict.len() as u16).to_le_bytes())?;
    out.write_all(dict.as_bytes())?;
    let mut buf = Vec::with_capacity(cols * 8);
    for row in data.chunks(cols.max(1)) {
        buf.clear();
        for x in row {
            buf.extend_from_slice(&x.to_le_bytes());
        }
        out.write_all(&buf)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_refusals() {
        let mut bytes = Vec::new();
        write(&mut bytes, 2, 3, &[0.5, 0.25, 0.25, 1.0, 0.0, 1e-300]).unwrap();
        assert_eq!((bytes.len() - 48) % 64, 0);
        let h = parse_header(&bytes, "m").unwrap();
        assert_eq!((h.rows, h.cols, h.data_offset), (2, 3, bytes.len() - 48));
        let with = |dict: &str| {
            let mut b = b"\x93NUMPY\x01\x00".to_vec();
            b.extend((dict.len() as u16).to_le_bytes());
            b.extend(dict.as_bytes());
            b
        };
        let err = |dict: &str| parse_header(&with(dict), "m").unwrap_err().message;
        assert!(
            err("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }\n").contains("C order")
        );
        assert!(
            err("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n")
                .contains("float64")
        );
        assert!(
            err("{'descr': '<f8', 'fortran_order': False, 'shape': (6,), }\n")
                .contains("1-dimensional")
        );
        assert!(
            err("{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (6,), }")
                .contains("repeated")
        );
        assert!(
            err("{'descr': '<f8', 'fortran_order': False, 'shape': (2, x), }")
                .contains("non-integer")
        );
        assert!(
            err("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), 'x': 1}")
                .contains("unexpected key")
        );
        let ok = parse_header(
            &with("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }\n"),
            "m",
        )
        .unwrap();
        assert_eq!((ok.rows, ok.cols), (2, 3));
        assert!(parse_header(b"PK\x03\x04", "m").is_err());
    }
}
