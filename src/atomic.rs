//! A file written whole or not at all (issue 33: `privatize` left a partial output behind
//! when it failed on line 2): the bytes go to a temporary file beside the destination,
//! renamed onto it by [`AtomicFile::commit`]; dropped uncommitted, the temporary file is
//! removed and the destination is untouched.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// A buffered file that appears at its path only when committed.
pub struct AtomicFile {
    dest: PathBuf,
    tmp: PathBuf,
    out: Option<BufWriter<File>>,
}

impl AtomicFile {
    /// Start writing `dest` (created in the same directory, so the rename is atomic).
    pub fn create(dest: &Path) -> io::Result<AtomicFile> {
        let name = dest
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file path"))?;
        let tmp = dest.with_file_name(format!(
            ".{}.tmp-{}",
            name.to_string_lossy(),
            std::process::id()
        ));
        let out = BufWriter::new(File::create(&tmp)?);
        Ok(AtomicFile {
            dest: dest.to_path_buf(),
            tmp,
            out: Some(out),
        })
    }

    /// Flush and rename onto the destination.
    pub fn commit(mut self) -> io::Result<()> {
        let out = self.out.take().expect("committed once");
        let file = out.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&self.tmp, &self.dest)
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
            let _ = std::fs::remove_file(&self.tmp);
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
    }
}
