//! Debian packages the checks need, installed with `apt-get` when their
//! program is missing: Chromium for the page check, `redis-server` for the
//! run store's tests, `haproxy` for the deployment example's check. Each
//! test starts its own server in a folder of its own; the system's service
//! is never used.

use std::path::Path;

use anyhow::{Result, bail};

use crate::run;

/// `program` (an absolute path), installing Debian's `package` when it is
/// missing.
pub(crate) fn ensure(root: &Path, program: &str, package: &str) -> Result<()> {
    if Path::new(program).exists() {
        return Ok(());
    }
    println!("xtask: {program} is missing; installing Debian's {package}");
    let install = ["install", "-y", "--no-install-recommends", package];
    if run(root, "apt-get", &install)?.is_some() {
        // The package lists may be stale or missing on a fresh machine.
        if run(root, "apt-get", &["update"])?.is_some() || run(root, "apt-get", &install)?.is_some()
        {
            bail!("`apt-get install -y {package}` failed; install {package} (as root) and retry");
        }
    }
    if !Path::new(program).exists() {
        bail!(
            "{package} was installed but {program} is not there; install Debian's {package} package"
        );
    }
    Ok(())
}

/// `redis-server` and `haproxy`, which a package installs as a service:
/// stopped at once where the package started it, since the tests start
/// their own.
pub(crate) fn ensure_servers(root: &Path) -> Result<()> {
    for (program, package) in [
        ("/usr/bin/redis-server", "redis-server"),
        ("/usr/sbin/haproxy", "haproxy"),
    ] {
        let fresh = !Path::new(program).exists();
        ensure(root, program, package)?;
        if fresh {
            // No init system in a container answers this; that is fine.
            let _ = std::process::Command::new("service")
                .args([package, "stop"])
                .output();
        }
    }
    Ok(())
}
