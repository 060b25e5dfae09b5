import DiligenceCore

/// What the daemon does when logind announces a sleep or a wake.
extension Daemon {
    /// PrepareForSleep(true): brings the machine up to now, saves the timer and writes any
    /// session still unwritten, so a machine that never wakes loses nothing; the sleep is dated
    /// at this moment (`sleepAnnounced`).
    /// PrepareForSleep(false): applies the suspend policy at once (observeClocks sees the slept
    /// time) and re-arms the phase timers, whose CLOCK_MONOTONIC deadlines stood still.
    func sleepSignal(_ sleeping: Bool) {
        if sleeping {
            let now = driver.observeClocks()
            // The sleep begins now as far as the timer goes: an abandoned session ends here,
            // however late the wake is noticed.
            driver.sleepAnnounced = now
            let saved = driver.saveTimer(at: now)
            driver.retryUnsaved()
            records.recorder.scheduleRetry(timerSaveOwed: driver.timerSaveOwed)
            Log.info(
                "The machine is about to sleep; timer state \(saved ? "saved" : "not saved (will retry)") (\(machine.state.rawValue)).",
                fields: [("EVENT", "prepare_for_sleep"), ("STATE", machine.state.rawValue)])
        } else {
            Log.info("The machine woke up (logind).", fields: [("EVENT", "system_resumed")])
            driver.observeClocks()
            // A sleep that was announced but did not happen (it failed, or was cancelled).
            driver.sleepAnnounced = nil
            driver.rearm()
        }
    }
}
