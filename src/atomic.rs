//! A file written whole or not at all (issue 33: `privatize` left a partial output behind
//! when it failed on line 2): the bytes go to a temporary file beside the destination,
//! renamed onto it by [`AtomicFile::commit`]; dropped uncommitted, the temporary file is
//! removed and the destination is untouched.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// A buffered file that appears at its path only when committed. A destination that
/// exists and is not a regular file (`/dev/null`, a named pipe, `/dev/stdout`) is written
/// directly: renaming onto it would replace the device.
pub struct AtomicFile {
    dest: PathBuf,
    /// The temporary file, or `None` when writing the destination directly.
    tmp: Option<PathBuf>,
    out: Option<BufWriter<File>>,
}

impl AtomicFile {
    /// Start writing `dest` (a new temporary file in the same directory, so the rename is
    /// atomic; never a file that already exists there).
    pub fn create(dest: &Path) -> io::Result<AtomicFile> {
        let special = std::fs::metadata(dest).is_ok_and(|m| !m.is_file());
        if special {
            return Ok(AtomicFile {
                dest: dest.to_path_buf(),
                tmp: None,
                out: Some(BufWriter::new(File::create(dest)?)),
            });
        }
        let name = dest
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file path"))?;
        let tmp = dest.with_file_name(format!(
            ".{}.tmp-{}",
            name.to_string_lossy(),
            std::process::id()
        ));
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        Ok(AtomicFile {
            dest: dest.to_path_buf(),
            tmp: Some(tmp),
            out: Some(BufWriter::new(file)),
        })
    }

    /// Flush and rename onto the destination; on failure the temporary file is removed.
    pub fn commit(mut self) -> io::Result<()> {
        let out = self.out.take().expect("committed once");
        let done = (|| {
            let file = out.into_inner().map_err(|e| e.into_error())?;
            match &self.tmp {
                Some(tmp) => {
                    file.sync_all()?;
                    drop(file);
                    std::fs::rename(tmp, &self.dest)
                }
                // A device or pipe: flushed above; it has nothing to sync.
                None => Ok(()),
            }
        })();
        if done.is_err() {
            if let Some(tmp) = &self.tmp {
                let _ = std::fs::remove_file(tmp);
            }
        }
        done
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.out.as_mut().expect("open").write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.as_mut().expect("open").flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.out.take().is_some() {
            if let Some(tmp) = &self.tmp {
                let _ = std::fs::remove_file(tmp);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_committed_file_appears() {
        let dir = std::env::temp_dir().join(format!("mdp-atomic-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let dest = dir.join("out.txt");
        std::fs::write(&dest, "before").unwrap();
        {
            let mut f = AtomicFile::create(&dest).unwrap();
            f.write_all(b"partial").unwrap();
        }
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "before");
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            1,
            "temporary file left"
        );
        let mut f = AtomicFile::create(&dest).unwrap();
        f.write_all(b"whole").unwrap();
        f.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "whole");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
        // A device is written directly, never replaced.
        let mut f = AtomicFile::create(Path::new("/dev/null")).unwrap();
        f.write_all(b"discarded").unwrap();
        f.commit().unwrap();
        assert!(!std::fs::metadata("/dev/null").unwrap().is_file());
    }
}
