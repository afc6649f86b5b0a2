//! The OS calls behind the connection threads' placement: which CPUs the process may
//! run on, tying a thread to some of them, and the CPU time a thread or the whole
//! process has used.

use std::io;
use std::time::Duration;

/// A running thread, as the OS calls here name it.
pub type ThreadId = libc::pthread_t;

/// The CPUs the calling thread may run on, in ascending order. Called before any thread
/// is tied, that is the process's affinity mask, which `taskset` or a container's
/// cpuset may have narrowed.
#[cfg(target_os = "linux")]
pub fn allowed_cpus() -> io::Result<Vec<usize>> {
    // SAFETY: cpu_set_t is a plain bit array, for which all zeroes is a valid value.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: the kernel writes at most `size_of::<cpu_set_t>()` bytes into `set`.
    let failed =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) }
            != 0;
    if failed {
        return Err(io::Error::last_os_error());
    }
    let capacity = 8 * std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: CPU_ISSET only reads the bit array, and every index is below its size.
    Ok((0..capacity)
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .collect())
}

/// Lets `thread` run only on `cpus` (each below `CPU_SETSIZE`, as `allowed_cpus` gives).
#[cfg(target_os = "linux")]
pub fn set_thread_cpus(thread: ThreadId, cpus: &[usize]) -> io::Result<()> {
    let capacity = 8 * std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: all zeroes is a valid cpu_set_t; CPU_SET writes one bit of it, at an
    // index the filter keeps below its size.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus.iter().filter(|&&cpu| cpu < capacity) {
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    // SAFETY: `thread` is a live thread of this process (the caller joins it only after
    // its last call here), and the kernel only reads `set`.
    let code = unsafe {
        libc::pthread_setaffinity_np(thread, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    match code {
        0 => Ok(()),
        code => Err(io::Error::from_raw_os_error(code)),
    }
}

/// CPU time `thread` has used (user and system).
#[cfg(target_os = "linux")]
pub fn thread_cpu_time(thread: ThreadId) -> io::Result<Duration> {
    let mut clock: libc::clockid_t = 0;
    // SAFETY: `thread` is live (see `set_thread_cpus`); the call writes one clockid_t.
    let code = unsafe { libc::pthread_getcpuclockid(thread, &mut clock) };
    if code != 0 {
        return Err(io::Error::from_raw_os_error(code));
    }
    clock_time(clock)
}

/// CPU time every thread of the process together has used.
#[cfg(target_os = "linux")]
pub fn process_cpu_time() -> io::Result<Duration> {
    clock_time(libc::CLOCK_PROCESS_CPUTIME_ID)
}

#[cfg(target_os = "linux")]
fn clock_time(clock: libc::clockid_t) -> io::Result<Duration> {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: the call writes one timespec.
    if unsafe { libc::clock_gettime(clock, &mut now) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let nanos = u32::try_from(now.tv_nsec).unwrap_or(0);
    Ok(Duration::new(u64::try_from(now.tv_sec).unwrap_or(0), nanos))
}

#[cfg(not(target_os = "linux"))]
fn unsupported<T>() -> io::Result<T> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "thread placement is only done on Linux",
    ))
}

#[cfg(not(target_os = "linux"))]
pub fn allowed_cpus() -> io::Result<Vec<usize>> {
    unsupported()
}

#[cfg(not(target_os = "linux"))]
pub fn set_thread_cpus(_thread: ThreadId, _cpus: &[usize]) -> io::Result<()> {
    unsupported()
}

#[cfg(not(target_os = "linux"))]
pub fn thread_cpu_time(_thread: ThreadId) -> io::Result<Duration> {
    unsupported()
}

#[cfg(not(target_os = "linux"))]
pub fn process_cpu_time() -> io::Result<Duration> {
    unsupported()
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::os::unix::thread::JoinHandleExt;

    #[test]
    fn a_tied_thread_may_run_only_on_its_cpus_and_others_keep_theirs() {
        let cpus = allowed_cpus().unwrap();
        assert!(!cpus.is_empty(), "a running process may use some CPU");
        let last = *cpus.last().unwrap();
        let (tied_tx, tied_rx) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            tied_rx.recv().unwrap();
            allowed_cpus().unwrap()
        });
        set_thread_cpus(thread.as_pthread_t(), &[last]).unwrap();
        tied_tx.send(()).unwrap();
        assert_eq!(thread.join().unwrap(), vec![last]);
        assert_eq!(
            allowed_cpus().unwrap(),
            cpus,
            "only that thread is narrowed"
        );
    }

    #[test]
    fn cpu_times_grow_with_work_done() {
        let before = process_cpu_time().unwrap();
        let (spun_tx, spun_rx) = std::sync::mpsc::channel::<()>();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            // SAFETY: pthread_self has no preconditions.
            let me = unsafe { libc::pthread_self() };
            let mut x = 0u64;
            while thread_cpu_time(me).unwrap() < Duration::from_millis(30) {
                x = x.wrapping_mul(31).wrapping_add(1);
            }
            std::hint::black_box(x);
            spun_tx.send(()).unwrap();
            done_rx.recv().unwrap();
        });
        spun_rx.recv().unwrap();
        let spent = thread_cpu_time(thread.as_pthread_t()).unwrap();
        done_tx.send(()).unwrap();
        thread.join().unwrap();
        assert!(spent >= Duration::from_millis(30), "{spent:?}");
        assert!(process_cpu_time().unwrap() - before >= spent);
    }
}
