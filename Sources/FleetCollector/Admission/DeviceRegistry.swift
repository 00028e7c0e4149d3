import DeviceIdentity
import FleetReports
import Foundation

/// The operator's side of admission and the guard's figures, on any store (the same SQL
/// for SQLite and PostgreSQL).
extension ReportStore {
    /// Admits the devices named by key (64 hex digits) or device id (32): listed from now
    /// on, accepted, their held reports moved to the fleet's. A key not seen yet is listed,
    /// so its device is accepted at its first batch (preauthorized).
    /// - Parameter byOperator: an operator's `fleet admit`, which lifts a rejection; an admit
    ///   list (false) never admits a key an operator rejected.
    /// - Throws: ``FleetCollectorError`` `.storeFailed`.
    public func admit(_ names: [DeviceReference], now: Date, byOperator: Bool = true) async throws -> AdmissionChange {
        var keys = try await keys(of: names)
        if !byOperator {
            let rejected = try await rejectedKeys(among: keys)
            keys.removeAll { rejected.contains($0) }
        }
        let held = try await heldCount(keys: keys)
        var statements: [SQLStatement] = []
        // The rejection is checked again in the statements: an operator may reject a key
        // between the read above and this transaction.
        for key in keys { statements += BatchAdmission.admit(key: key, now: ReportSQL.millis(now), lifting: byOperator) }
        let changed = try await execute(statements)
        let run = keys.isEmpty ? 1 : statements.count / keys.count
        let devices = stride(from: BatchAdmission.acceptedIndex(lifting: byOperator), to: changed.count, by: run).reduce(0) { $0 + changed[$1] }
        return AdmissionChange(named: names.count, devices: devices, reports: held)
    }

    /// Rejects the devices named: their batches are refused from now on, their held reports
    /// deleted, and no admit list admits their keys again until an operator admits them.
    /// - Throws: ``FleetCollectorError`` `.storeFailed`.
    public func reject(_ names: [DeviceReference], now: Date = Date()) async throws -> AdmissionChange {
        let keys = try await keys(of: names)
        var statements: [SQLStatement] = []
        for key in keys { statements += BatchAdmission.reject(key: key, now: ReportSQL.millis(now)) }
        let changed = try await execute(statements)
        let run = keys.isEmpty ? 1 : statements.count / keys.count
        let reports = stride(from: 1, to: changed.count, by: run).reduce(0) { $0 + changed[$1] }
        let devices = stride(from: 2, to: changed.count, by: run).reduce(0) { $0 + changed[$1] }
        return AdmissionChange(named: names.count, devices: devices, reports: reports)
    }

    /// Forgets the keys of the devices named by id: each binds again at its next batch.
    /// - Throws: ``FleetCollectorError`` `.storeFailed`.
    public func forget(devices ids: [DeviceID]) async throws -> AdmissionChange {
        var statements: [SQLStatement] = []
        for id in ids { statements += BatchAdmission.forget(device: id) }
        let changed = try await execute(statements)
        let reports = stride(from: 0, to: changed.count, by: 2).reduce(0) { $0 + changed[$1] }
        let devices = stride(from: 1, to: changed.count, by: 2).reduce(0) { $0 + changed[$1] }
        return AdmissionChange(named: ids.count, devices: devices, reports: reports)
    }

    /// The devices known by key, most recently heard from first (at most `limit`), and the
    /// count per status, each with its labels; with `labels`, only the devices whose labels
    /// include them are counted and listed.
    /// - Throws: ``FleetCollectorError`` `.storeFailed`.
    public func devices(
        status: DeviceStatus?, limit: Int, admission: AdmissionMode, labels: LabelFilter = LabelFilter()
    ) async throws -> DeviceList {
        // A device's labels: those its latest stored batch carried (`device_labels`), admitted or held.
        let from = "FROM device_keys k LEFT JOIN device_labels l ON l.device = k.device"
        let patterns = labels.patterns.map { SQLValue.text($0) }
        let matches = labels.patterns.map { _ in "REPLACE(COALESCE(l.labels, ''), ?, '') <> COALESCE(l.labels, '')" }
        let cohort = matches.isEmpty ? "" : " WHERE " + matches.joined(separator: " AND ")
        var counts: [String: Int] = [:]
        for row in try await query("SELECT k.status, COUNT(*) \(from)\(cohort) GROUP BY k.status", patterns) {
            if row.count == 2, let s = row[0].text, let n = row[1].integer { counts[s] = Int(n) }
        }
        let conditions = (status == nil ? [] : ["k.status = ?"]) + matches
        let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        let rows = try await query(
            "SELECT k.device, k.key, k.status, k.app, k.channel, k.first_ms, k.last_ms, k.held, COALESCE(l.labels, '') "
                + "\(from)\(filter) ORDER BY k.last_ms DESC, k.device LIMIT ?",
            (status.map { [SQLValue.text($0.rawValue)] } ?? []) + patterns + [.integer(Int64(max(0, min(limit, DeviceList.maxListed))))])
        let devices = rows.compactMap { r -> DeviceEntry? in
            guard r.count == 9, let device = r[0].text.flatMap(DeviceID.init), let key = r[1].text.flatMap(DevicePublicKey.init(hex:)),
                let status = r[2].text, let app = r[3].text,
                let channel = r[4].text, let first = r[5].integer, let last = r[6].integer, let held = r[7].integer, let stored = r[8].text
            else { return nil }
            return DeviceEntry(
                device: device, key: key, status: status, app: app, channel: channel, firstSeen: Self.date(first), lastSeen: Self.date(last),
                held: Int(held), labels: Self.labels(stored))
        }
        return DeviceList(admission: admission.rawValue, counts: counts, devices: devices, labels: labels.isEmpty ? nil : labels.labels)
    }

    /// Stored labels (`ReportBatch.labelsJSON`, the empty string for none) as key to value.
    static func labels(_ stored: String) -> [String: String] {
        guard !stored.isEmpty else { return [:] }
        return (try? JSONDecoder().decode([String: String].self, from: Data(stored.utf8))) ?? [:]
    }

    /// The guard's figures for `versions` of `app`/`channel` (docs/fleet-reports.md#the-rollout-guard):
    /// trials, rollbacks and errors after start (`page-errors`) of the devices it trusts.
    ///
    /// One rule whatever the admission mode: a device counts when it is accepted (never
    /// pending, rejected or a later id of a key that speaks for another) **and** either an
    /// operator or an admit list admitted its key, or the collector first heard from it
    /// before `trustedBefore` (it has a history). The mode decides who may store reports;
    /// it never changes who counts, so a collector restarted in another mode on the same
    /// database judges the same devices. With `labels`, only devices whose latest labels (their
    /// row in `devices`: those of the latest batch stored) include every one of them count,
    /// all their reports with them, as in a summary of that cohort.
    /// - Parameters:
    ///   - trustedBefore: devices first heard from before it have a history (nil: none has).
    ///   - since: only reports received after it count.
    ///   - labels: the cohort (empty: every device).
    /// - Throws: ``FleetCollectorError`` `.storeFailed`.
    public func guardFigures(
        app: String, channel: String, versions: [String], trustedBefore: Date?, since: Date?, admission: AdmissionMode,
        labels: LabelFilter = LabelFilter()
    ) async throws -> GuardFigures {
        let sinceMs = since.map(ReportSQL.millis) ?? Int64.min
        let trustedMs = trustedBefore.map(ReportSQL.millis) ?? Int64.min
        // The cohort's condition and its patterns come right after the window's `?`
        // (matched as in a summary: FleetSummaryQuery.Scope).
        let cohort = labels.patterns.map { _ in " AND REPLACE(d.labels, ?, '') <> d.labels" }.joined()
        let scope: [SQLValue] = [.text(app), .text(channel), .integer(sinceMs)] + labels.patterns.map { .text($0) }
        let join = """
            FROM reports r JOIN devices d ON d.app = r.app AND d.channel = r.channel AND d.device = r.device
            LEFT JOIN device_keys k ON k.device = r.device
            LEFT JOIN admitted_keys a ON a.key = k.key
            WHERE r.app = ? AND r.channel = ? AND r.received_ms > ?\(cohort)
            """
        let trusted = "COALESCE(k.status, 'accepted') = 'accepted' AND (a.key IS NOT NULL OR COALESCE(d.first_ms, 0) < ?)"
        var figures: [VersionFigures] = []
        var untrusted = 0
        for version in versions {
            let args = scope + [.text(version)]
            let trials = try await query(
                "SELECT COUNT(DISTINCT r.device) \(join) AND r.version = ? AND r.type IN ('trial-started', 'rolled-back') AND \(trusted)",
                args + [.integer(trustedMs)])
            let failed = try await query(
                "SELECT COUNT(DISTINCT r.device) \(join) AND r.version = ? AND r.type = 'rolled-back' AND \(trusted)", args + [.integer(trustedMs)])
            let left = try await query(
                "SELECT COUNT(DISTINCT r.device) \(join) AND r.version = ? AND NOT (\(trusted))", args + [.integer(trustedMs)])
            untrusted += Int(left.first?.first?.integer ?? 0)
            // Errors after start of the same trusted devices: each one's sums, in device order
            // (the same figures on every database).
            let errors = try await query(
                "SELECT r.device, \(FleetSummaryQuery.errorSums("r.")) \(join) AND COALESCE(r.version, r.running) = ? "
                    + "AND r.type = 'page-errors' AND \(trusted) GROUP BY r.device ORDER BY r.device",
                args + [.integer(trustedMs)])
            figures.append(
                VersionFigures(
                    version: version, trials: Int(trials.first?.first?.integer ?? 0), failed: Int(failed.first?.first?.integer ?? 0),
                    errors: ErrorFigures(devices: errors.compactMap { $0.count == 3 ? FleetSummaryQuery.errorSum($0[1...]) : nil })))
        }
        let reportedRows = try await query(
            "SELECT r.version, MAX(r.received_ms) \(join) AND r.version IS NOT NULL AND \(trusted) "
                + "GROUP BY r.version ORDER BY 2 DESC, 1 LIMIT \(GuardFigures.maxReported + GuardFigures.maxVersions)",
            scope + [.integer(trustedMs)])
        let named = Set(versions)
        let reported = reportedRows.compactMap { $0.first?.text }.filter { !named.contains($0) }.prefix(GuardFigures.maxReported)
            .sorted { FleetSummaryQuery.newer($0, than: $1) }
        return GuardFigures(
            app: app, channel: channel, admission: admission.rawValue, trust: GuardFigures.admittedOrHistory,
            trustedBefore: trustedBefore, since: since, versions: figures, reported: Array(reported), untrustedDevices: untrusted,
            labels: labels.isEmpty ? nil : labels.labels)
    }

    /// Keys of `names`: a key as it is, a device id as the key bound to it (none: left out).
    func keys(of names: [DeviceReference]) async throws -> [DevicePublicKey] {
        var keys: Set<DevicePublicKey> = []
        for name in names {
            switch name {
            case .key(let key):
                keys.insert(key)
            case .id(let id):
                let stored = try await query("SELECT key FROM device_keys WHERE device = ?", [.text(id.text)]).first?.first?.text
                if let key = stored.flatMap(DevicePublicKey.init(hex:)) { keys.insert(key) }
            }
        }
        return keys.sorted()
    }

    /// The keys of `keys` an operator rejected.
    func rejectedKeys(among keys: [DevicePublicKey]) async throws -> Set<DevicePublicKey> {
        var out: Set<DevicePublicKey> = []
        for key in keys where try await query("SELECT COUNT(*) FROM rejected_keys WHERE key = ?", [.text(key.hex)]).first?.first?.integer ?? 0 > 0 {
            out.insert(key)
        }
        return out
    }

    func heldCount(keys: [DevicePublicKey]) async throws -> Int {
        var n = 0
        for key in keys {
            let rows = try await query(
                "SELECT COUNT(*) FROM held_reports WHERE device IN (SELECT device FROM device_keys WHERE key = ?)", [.text(key.hex)])
            n += Int(rows.first?.first?.integer ?? 0)
        }
        return n
    }

    static func date(_ ms: Int64) -> Date { Date(timeIntervalSince1970: Double(ms) / 1000) }
}
