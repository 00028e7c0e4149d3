import FleetReports
import Foundation

/// A statement of the shared SQL and its arguments.
public struct SQLStatement: Sendable, Equatable {
    /// The SQL text (`?` placeholders).
    public var sql: String
    /// The arguments, in order.
    public var arguments: [SQLValue]

    /// A statement.
    public init(_ sql: String, _ arguments: [SQLValue] = []) {
        self.sql = sql
        self.arguments = arguments
    }
}

/// The admission of one batch (docs/fleet-reports.md#admission), the same for every store:
/// what to read in the batch's transaction, what the rows read decide, and what to write.
/// A store runs ``reads``, passes their rows to ``decide(_:_:)``, writes the reports into
/// the table decided (each insert telling which seqs were stored), then ``after(_:stored:)``.
struct BatchAdmission {
    /// The most reports held for one device that is not admitted: past it its batches get 429.
    static let maxHeldPerDevice: Int64 = 10_000

    let batch: ReportBatch
    let mode: AdmissionMode
    let received: Date

    /// What the rows read decided.
    struct Decision: Equatable {
        var verdict: AdmissionVerdict
        /// Where the reports go (`reports` or `held_reports`); nil when refused.
        var table: String?
        /// Statements before the reports (binding a new device's key, promoting a listed one).
        var before: [SQLStatement]
    }

    /// The device's bound key, its status and reports held; then whether its key is listed.
    var reads: [SQLStatement] {
        [
            SQLStatement("SELECT key, status, held FROM device_keys WHERE device = ?", [.text(batch.device)]),
            SQLStatement("SELECT COUNT(*) FROM admitted_keys WHERE key = ?", [.text(batch.key ?? "")]),
        ]
    }

    /// Decides from the rows of ``reads``.
    func decide(_ bound: [[SQLValue]], _ listed: [[SQLValue]]) -> Decision {
        let row = bound.first
        let boundKey = row?.first?.text
        let status = (row?.count ?? 0) > 1 ? row?[1].text.flatMap(DeviceStatus.init(rawValue:)) : nil
        let held = (row?.count ?? 0) > 2 ? row?[2].integer ?? 0 : 0
        let isListed = (listed.first?.first?.integer ?? 0) > 0
        let now = ReportSQL.millis(received)
        guard let key = batch.key else {
            if boundKey != nil {
                return refuse(.unsignedBound, "device \(batch.device) is bound to a key: unsigned batches for it are refused")
            }
            guard mode == .open else {
                return refuse(.unsigned, "unsigned batch: this collector admits \(mode.rawValue) devices only, each with its key")
            }
            return Decision(verdict: .accepted, table: "reports", before: [])
        }
        if let boundKey {
            guard boundKey == key else {
                return refuse(.keyMismatch, "device \(batch.device) is bound to another key: this batch's key is refused")
            }
            switch status {
            case .rejected?:
                return refuse(.rejected, "device \(batch.device) was rejected by the collector's operator")
            case .accepted?:
                return Decision(verdict: .accepted, table: "reports", before: [])
            case .pending?, nil:
                if isListed {
                    return Decision(verdict: .accepted, table: "reports", before: Self.admit(key: key, now: now))
                }
                guard held < Self.maxHeldPerDevice else {
                    return refuse(.heldFull, "device \(batch.device) is not admitted and has \(held) reports held, the most kept")
                }
                return Decision(verdict: .held, table: "held_reports", before: [])
            }
        }
        let admitted = mode == .open || isListed
        let bind = SQLStatement(
            """
            INSERT INTO device_keys (device, key, status, app, channel, first_ms, last_ms) VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (device) DO NOTHING
            """,
            [
                .text(batch.device), .text(key), .text((admitted ? DeviceStatus.accepted : .pending).rawValue), .text(batch.app),
                .text(batch.channel), .integer(now), .integer(now),
            ])
        return Decision(verdict: admitted ? .accepted : .held, table: admitted ? "reports" : "held_reports", before: [bind])
    }

    /// Read after ``Decision/before`` in the same transaction: the key bound now. Another
    /// collector may have bound the id to another key between the read and the bind.
    var confirm: SQLStatement { SQLStatement("SELECT key FROM device_keys WHERE device = ?", [.text(batch.device)]) }

    /// The refusal when the confirmed key is not the batch's.
    func confirmed(_ rows: [[SQLValue]]) -> AdmissionRefusal? {
        guard let key = batch.key, let bound = rows.first?.first?.text, bound != key else { return nil }
        return AdmissionRefusal(.keyMismatch, "device \(batch.device) is bound to another key: this batch's key is refused")
    }

    /// Statements after the reports went into `table`: the device's row (admitted) or its
    /// held count, and its key's last sight.
    func after(_ table: String, stored: Set<Int64>) -> [SQLStatement] {
        var out: [SQLStatement] = []
        let now = ReportSQL.millis(received)
        if table == "reports" {
            if let device = ReportSQL.deviceArguments(batch, stored: stored, received: received) {
                out.append(SQLStatement(ReportSQL.upsertDevice, device))
            }
            if batch.key != nil {
                out.append(SQLStatement("UPDATE device_keys SET last_ms = ? WHERE device = ?", [.integer(now), .text(batch.device)]))
            }
        } else {
            out.append(
                SQLStatement(
                    "UPDATE device_keys SET last_ms = ?, held = held + ? WHERE device = ?",
                    [.integer(now), .integer(Int64(stored.count)), .text(batch.device)]))
        }
        return out
    }

    private func refuse(_ reason: AdmissionRefusal.Reason, _ message: String) -> Decision {
        Decision(verdict: .refused(AdmissionRefusal(reason, message)), table: nil, before: [])
    }

    // MARK: Operators' decisions

    /// Admits `key`: listed from now on, its devices accepted, their held reports moved to
    /// the fleet's (each device's row made from them).
    static func admit(key: String, now: Int64) -> [SQLStatement] {
        let ofKey = "device IN (SELECT device FROM device_keys WHERE key = ?)"
        return [
            SQLStatement("INSERT INTO admitted_keys (key, added_ms) VALUES (?, ?) ON CONFLICT (key) DO NOTHING", [.text(key), .integer(now)]),
            SQLStatement("UPDATE device_keys SET status = 'accepted' WHERE key = ? AND status <> 'accepted'", [.text(key)]),
            SQLStatement(
                "INSERT INTO reports (\(ReportSQL.reportColumnList)) SELECT \(ReportSQL.reportColumnList) FROM held_reports WHERE \(ofKey) "
                    + "ON CONFLICT (device, stream, seq) DO NOTHING", [.text(key)]),
            SQLStatement(
                """
                INSERT INTO devices (app, channel, device, last_ms, running, received_ms, first_ms)
                SELECT app, channel, device, time_ms, running, last_received, first_received FROM (
                    SELECT app, channel, device, time_ms, running,
                        MAX(received_ms) OVER (PARTITION BY app, channel, device) AS last_received,
                        MIN(received_ms) OVER (PARTITION BY app, channel, device) AS first_received,
                        ROW_NUMBER() OVER (PARTITION BY app, channel, device ORDER BY time_ms DESC, seq DESC) AS rn
                    FROM reports WHERE \(ofKey)) latest
                WHERE rn = 1
                ON CONFLICT (app, channel, device) DO UPDATE SET
                    last_ms = CASE WHEN excluded.last_ms >= devices.last_ms THEN excluded.last_ms ELSE devices.last_ms END,
                    running = CASE WHEN excluded.last_ms >= devices.last_ms THEN excluded.running ELSE devices.running END,
                    received_ms = CASE WHEN excluded.received_ms >= devices.received_ms THEN excluded.received_ms ELSE devices.received_ms END,
                    first_ms = CASE WHEN devices.first_ms IS NULL OR excluded.first_ms < devices.first_ms
                        THEN excluded.first_ms ELSE devices.first_ms END
                """, [.text(key)]),
            SQLStatement("DELETE FROM held_reports WHERE \(ofKey)", [.text(key)]),
            SQLStatement("UPDATE device_keys SET held = 0 WHERE key = ?", [.text(key)]),
        ]
    }

    /// Rejects `key`: no longer listed, its devices' batches refused, their held reports deleted.
    static func reject(key: String) -> [SQLStatement] {
        [
            SQLStatement("DELETE FROM admitted_keys WHERE key = ?", [.text(key)]),
            SQLStatement("DELETE FROM held_reports WHERE device IN (SELECT device FROM device_keys WHERE key = ?)", [.text(key)]),
            SQLStatement("UPDATE device_keys SET status = 'rejected', held = 0 WHERE key = ?", [.text(key)]),
        ]
    }

    /// Forgets `device`'s key (a device that lost its key file): its next batch binds again,
    /// under the collector's admission; what it reported stays.
    static func forget(device: String) -> [SQLStatement] {
        [
            SQLStatement("DELETE FROM held_reports WHERE device = ?", [.text(device)]),
            SQLStatement("DELETE FROM device_keys WHERE device = ?", [.text(device)]),
        ]
    }
}
