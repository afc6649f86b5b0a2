//! Where the connection threads run: tied to CPUs, spread evenly, while they are the
//! only busy threads of the process; free to move while other threads need CPU too.
//!
//! Why tie them: Linux's load balancer looks at how busy each CPU is, not at how many of
//! our threads share one. On 2 CPUs with 4 connection threads it often left three of
//! them on one CPU for seconds at a time, because neither CPU was full; the clients of
//! those three then waited behind each other. In a 20 s range run at 1,000,000 rows the
//! p99 was 0.53-0.54 ms in every such second, and 0.40-0.41 ms in four of the five
//! seconds while the threads were split two and two (ARCHITECTURE.md §2, "Why placement").
//!
//! Why not always: during single-row writes the group-commit thread uses about a third
//! of a CPU. A tied connection thread whose CPU is running it waits, even while the
//! other CPU idles; in 15 s INSERT runs tied threads served 6% fewer transactions (three
//! runs at 19.7k-22.2k TPS against two at 21.8k-22.9k). So a governor thread watches the
//! process's CPU time: when threads other than the connection threads use more than
//! `BUSY_OTHERS` of a CPU, it frees the connection threads at once, and it ties them
//! again after `QUIET_INTERVALS_TO_TIE` quiet looks.

use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::affinity::{self, ThreadId};

/// Where the connection threads may run (`pin_connection_threads` in the config).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Placement {
    /// Tied to CPUs while they are the only busy threads, free otherwise.
    Auto,
    /// Always tied: thread i on the i-th CPU the process may use, modulo their number.
    Always,
    /// Wherever the OS scheduler puts them.
    Never,
}

impl std::str::FromStr for Placement {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "auto" => Ok(Placement::Auto),
            "always" => Ok(Placement::Always),
            "never" => Ok(Placement::Never),
            other => Err(format!(
                "{other:?} is not a placement: use auto, always or never"
            )),
        }
    }
}

/// How often the governor looks at the CPU times.
const INTERVAL: Duration = Duration::from_millis(250);
/// Other threads using more than this share of one CPU free the connection threads.
const BUSY_OTHERS: f64 = 0.10;
/// Looks in a row with the other threads quiet before the threads are tied again: a
/// workload that writes now and then should not flip the placement every interval.
const QUIET_INTERVALS_TO_TIE: u32 = 4;

/// The connection threads and the CPUs each is tied to when tied.
pub(super) struct Assignment {
    pub threads: Vec<ThreadId>,
    /// The CPU of each thread in `threads`.
    pub cpus: Vec<usize>,
    /// Every CPU the process may use: where a freed thread may go.
    pub allowed: Vec<usize>,
}

impl Assignment {
    /// Ties each thread to its CPU (`tied`) or lets it run on every allowed CPU.
    pub fn apply(&self, tied: bool) {
        for (i, (&thread, &cpu)) in self.threads.iter().zip(&self.cpus).enumerate() {
            let placed = if tied {
                affinity::set_thread_cpus(thread, &[cpu])
            } else {
                affinity::set_thread_cpus(thread, &self.allowed)
            };
            if let Err(e) = placed {
                // Only a cost: the thread keeps its previous placement.
                tracing::warn!("cannot place connection thread {i}: {e}");
            }
        }
    }
}

/// Decides, one look at a time, whether the connection threads should be tied.
#[derive(Debug)]
pub(super) struct Decider {
    tied: bool,
    quiet_looks: u32,
}

impl Decider {
    pub fn new(tied: bool) -> Self {
        Decider {
            tied,
            quiet_looks: 0,
        }
    }

    /// Takes the share of one CPU the other threads used since the last look and
    /// returns the new placement if it changes (`Some(true)` = tie).
    pub fn look(&mut self, others_share: f64) -> Option<bool> {
        if others_share > BUSY_OTHERS {
            self.quiet_looks = 0;
            if self.tied {
                self.tied = false;
                return Some(false);
            }
            return None;
        }
        self.quiet_looks = self.quiet_looks.saturating_add(1);
        if !self.tied && self.quiet_looks >= QUIET_INTERVALS_TO_TIE {
            self.tied = true;
            return Some(true);
        }
        None
    }
}

/// The governor thread of `Placement::Auto`; `stop` ends it.
pub(super) struct Governor {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl Governor {
    /// Starts watching; the threads in `assignment` are tied already. They must outlive
    /// the governor: stop it before joining them.
    pub fn start(assignment: Assignment) -> std::io::Result<Governor> {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let stopped = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("pgwide-placement".into())
            .spawn(move || govern(&assignment, &stopped))?;
        Ok(Governor {
            stop,
            thread: Some(thread),
        })
    }

    pub fn stop(mut self) {
        self.stop_and_join();
    }

    fn stop_and_join(&mut self) {
        let (flag, wake) = &*self.stop;
        *flag.lock().unwrap_or_else(|p| p.into_inner()) = true;
        wake.notify_one();
        if let Some(thread) = self.thread.take() {
            if thread.join().is_err() {
                tracing::error!("the placement governor panicked");
            }
        }
    }
}

impl Drop for Governor {
    fn drop(&mut self) {
        self.stop_and_join();
    }
}

/// The governor's loop: every `INTERVAL`, the CPU time of the whole process minus that
/// of the connection threads (and of this thread, a few microseconds) is what the
/// other threads used.
fn govern(assignment: &Assignment, stop: &(Mutex<bool>, Condvar)) {
    let mut decider = Decider::new(true);
    let mut last = match others_cpu_time(assignment) {
        Ok(time) => time,
        Err(e) => {
            tracing::warn!("connection threads stay tied: cannot read CPU times: {e}");
            return;
        }
    };
    let (flag, wake) = stop;
    let mut stopped = flag.lock().unwrap_or_else(|p| p.into_inner());
    loop {
        let started = std::time::Instant::now();
        while !*stopped && started.elapsed() < INTERVAL {
            let left = INTERVAL.saturating_sub(started.elapsed());
            stopped = match wake.wait_timeout(stopped, left) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
        if *stopped {
            return;
        }
        let now = match others_cpu_time(assignment) {
            Ok(time) => time,
            // A thread ended (shutdown): nothing left to place.
            Err(_) => return,
        };
        let share = now.saturating_sub(last).as_secs_f64() / started.elapsed().as_secs_f64();
        last = now;
        if let Some(tied) = decider.look(share) {
            tracing::debug!(tied, others_share = share, "connection threads placed");
            assignment.apply(tied);
        }
    }
}

/// CPU time used so far by every thread of the process but the connection threads.
fn others_cpu_time(assignment: &Assignment) -> std::io::Result<Duration> {
    // Connection threads first: the process total read after them includes all they
    // used, so the difference cannot go below zero for their sake.
    let mut connections = Duration::ZERO;
    for &thread in &assignment.threads {
        connections += affinity::thread_cpu_time(thread)?;
    }
    Ok(affinity::process_cpu_time()?.saturating_sub(connections))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_others_free_the_threads_at_once_and_quiet_ties_them_after_a_while() {
        let mut decider = Decider::new(true);
        assert_eq!(decider.look(0.02), None, "quiet while tied: stay tied");
        assert_eq!(
            decider.look(0.30),
            Some(false),
            "a busy sync thread frees them"
        );
        assert_eq!(decider.look(0.30), None);
        for _ in 1..QUIET_INTERVALS_TO_TIE {
            assert_eq!(
                decider.look(0.0),
                None,
                "not tied again at the first quiet look"
            );
        }
        assert_eq!(decider.look(0.0), Some(true));
    }

    #[test]
    fn one_busy_look_restarts_the_quiet_count() {
        let mut decider = Decider::new(false);
        for _ in 1..QUIET_INTERVALS_TO_TIE {
            assert_eq!(decider.look(0.0), None);
        }
        assert_eq!(decider.look(0.5), None, "still free");
        for _ in 1..QUIET_INTERVALS_TO_TIE {
            assert_eq!(decider.look(0.05), None);
        }
        assert_eq!(decider.look(0.05), Some(true));
    }

    #[test]
    fn placements_parse_from_their_names() {
        assert_eq!("auto".parse::<Placement>(), Ok(Placement::Auto));
        assert_eq!("always".parse::<Placement>(), Ok(Placement::Always));
        assert_eq!("never".parse::<Placement>(), Ok(Placement::Never));
        assert!("sometimes".parse::<Placement>().is_err());
    }
}
