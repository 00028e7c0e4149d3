import FleetReports
import Foundation

/// The operator's side of admission and the guard's figures, on any store (the same SQL
/// for SQLite and PostgreSQL).
extension ReportStore {
    /// Admits the devices named by key (64 hex digits) or device id (32): listed from now
    /// on, accepted, their held reports moved to the fleet's. A key not seen yet is listed,
    /// so its device is accepted at its first batch (preauthorized).
    /// - Throws: ``FleetCollectorError`` `.storeFailed`.
    public func admit(_ names: [String], now: Date) async throws -> AdmissionChange {
        let keys = try await keys(of: names)
        let held = try await heldCount(keys: keys)
        var statements: [SQLStatement] = []
        for key in keys { statements += BatchAdmission.admit(key: key, now: ReportSQL.millis(now)) }
        let changed = try await execute(statements)
        // The second statement of each key's run is its status change.
        let devices = stride(from: 1, to: changed.count, by: BatchAdmission.admit(key: "", now: 0).count).reduce(0) { $0 + changed[$1] }
        return AdmissionChange(named: names.count, devices: devices, reports: held)
    }

    /// Rejects the devices named: their batches are refused from now on, their held reports deleted.
    /// - Throws: ``FleetCollectorError`` `.storeFailed`.
    public func reject(_ names: [String]) async throws -> AdmissionChange {
        let keys = try await keys(of: names)
        var statements: [SQLStatement] = []
        for key in keys { statements += BatchAdmission.reject(key: key) }
        let changed = try await execute(statements)
        let reports = stride(from: 1, to: changed.count, by: 3).reduce(0) { $0 + changed[$1] }
        let devices = stride(from: 2, to: changed.count, by: 3).reduce(0) { $0 + changed[$1] }
        return AdmissionChange(named: names.count, devices: devices, reports: reports)
    }

    /// Forgets the keys of the devices named by id: each binds again at its next batch.
    /// - Throws: ``FleetCollectorError`` `.storeFailed`.
    public func forget(devices ids: [String]) async throws -> AdmissionChange {
        var statements: [SQLStatement] = []
        for id in ids { statements += BatchAdmission.forget(device: id) }
        let changed = try await execute(statements)
        let reports = stride(from: 0, to: changed.count, by: 2).reduce(0) { $0 + changed[$1] }
        let devices = stride(from: 1, to: changed.count, by: 2).reduce(0) { $0 + changed[$1] }
        return AdmissionChange(named: ids.count, devices: devices, reports: reports)
    }

    /// The devices known by key, most recently heard from first (at most `limit`), and the count per status.
    /// - Throws: ``FleetCollectorError`` `.storeFailed`.
    public func devices(status: DeviceStatus?, limit: Int, admission: AdmissionMode) async throws -> DeviceList {
        var counts: [String: Int] = [:]
        for row in try await query("SELECT status, COUNT(*) FROM device_keys GROUP BY status", []) {
            if row.count == 2, let s = row[0].text, let n = row[1].integer { counts[s] = Int(n) }
        }
        let filter = status == nil ? "" : " WHERE status = ?"
        let rows = try await query(
            "SELECT device, key, status, app, channel, first_ms, last_ms, held FROM device_keys\(filter) ORDER BY last_ms DESC, device LIMIT ?",
            (status.map { [SQLValue.text($0.rawValue)] } ?? []) + [.integer(Int64(max(0, min(limit, DeviceList.maxListed))))])
        let devices = rows.compactMap { r -> DeviceEntry? in
            guard r.count == 8, let device = r[0].text, let key = r[1].text, let status = r[2].text, let app = r[3].text,
                let channel = r[4].text, let first = r[5].integer, let last = r[6].integer, let held = r[7].integer
            else { return nil }
            return DeviceEntry(
                device: device, key: key, status: status, app: app, channel: channel, firstSeen: Self.date(first), lastSeen: Self.date(last),
                held: Int(held))
        }
        return DeviceList(admission: admission.rawValue, counts: counts, devices: devices)
    }

    /// The guard's figures for `versions` of `app`/`channel` (docs/fleet-reports.md#the-rollout-guard).
    /// - Parameters:
    ///   - trustedBefore: under open admission, only devices first heard from before it count.
    ///   - since: only reports received after it count.
    /// - Throws: ``FleetCollectorError`` `.storeFailed`.
    public func guardFigures(
        app: String, channel: String, versions: [String], trustedBefore: Date?, since: Date?, admission: AdmissionMode
    ) async throws -> GuardFigures {
        let history = admission == .open ? trustedBefore : nil
        let sinceMs = since.map(ReportSQL.millis) ?? Int64.min
        let trustedMs = history.map(ReportSQL.millis) ?? Int64.max
        let key: [SQLValue] = [.text(app), .text(channel)]
        let join = """
            FROM reports r JOIN devices d ON d.app = r.app AND d.channel = r.channel AND d.device = r.device
            WHERE r.app = ? AND r.channel = ? AND r.received_ms > ?
            """
        var figures: [VersionFigures] = []
        var untrusted = 0
        for version in versions {
            let args = key + [.integer(sinceMs), .text(version)]
            let trials = try await query(
                "SELECT COUNT(DISTINCT r.device) \(join) AND r.version = ? AND r.type IN ('trial-started', 'rolled-back') "
                    + "AND COALESCE(d.first_ms, 0) < ?", args + [.integer(trustedMs)])
            let failed = try await query(
                "SELECT COUNT(DISTINCT r.device) \(join) AND r.version = ? AND r.type = 'rolled-back' AND COALESCE(d.first_ms, 0) < ?",
                args + [.integer(trustedMs)])
            if history != nil {
                let left = try await query(
                    "SELECT COUNT(DISTINCT r.device) \(join) AND r.version = ? AND COALESCE(d.first_ms, 0) >= ?", args + [.integer(trustedMs)])
                untrusted += Int(left.first?.first?.integer ?? 0)
            }
            figures.append(
                VersionFigures(
                    version: version, trials: Int(trials.first?.first?.integer ?? 0), failed: Int(failed.first?.first?.integer ?? 0)))
        }
        let reportedRows = try await query(
            "SELECT r.version, MAX(r.received_ms) \(join) AND r.version IS NOT NULL AND COALESCE(d.first_ms, 0) < ? "
                + "GROUP BY r.version ORDER BY 2 DESC, 1 LIMIT \(GuardFigures.maxReported + GuardFigures.maxVersions)",
            key + [.integer(sinceMs), .integer(trustedMs)])
        let named = Set(versions)
        let reported = reportedRows.compactMap { $0.first?.text }.filter { !named.contains($0) }.prefix(GuardFigures.maxReported)
            .sorted { FleetSummaryQuery.newer($0, than: $1) }
        return GuardFigures(
            app: app, channel: channel, admission: admission.rawValue, trust: history == nil ? "admitted" : "history",
            trustedBefore: history, since: since, versions: figures, reported: Array(reported), untrustedDevices: untrusted)
    }

    /// Keys of `names`: a key as it is, a device id as the key bound to it (none: left out).
    func keys(of names: [String]) async throws -> [String] {
        var keys: [String] = []
        for name in names {
            if name.utf8.count == 64 {
                keys.append(name)
            } else if let key = try await query("SELECT key FROM device_keys WHERE device = ?", [.text(name)]).first?.first?.text {
                keys.append(key)
            }
        }
        return Array(Set(keys)).sorted()
    }

    func heldCount(keys: [String]) async throws -> Int {
        var n = 0
        for key in keys {
            let rows = try await query(
                "SELECT COUNT(*) FROM held_reports WHERE device IN (SELECT device FROM device_keys WHERE key = ?)", [.text(key)])
            n += Int(rows.first?.first?.integer ?? 0)
        }
        return n
    }

    static func date(_ ms: Int64) -> Date { Date(timeIntervalSince1970: Double(ms) / 1000) }
}
