import Foundation

/// What one check knows when it asks whether it may download a release now.
package struct DownloadRequest: Sendable, Equatable {
    /// The device's wall clock now.
    package var now: Date
    /// True when the link the download would take is metered.
    package var metered: Bool
    /// When the hold in force ends (a page or a local process holds downloads); `nil`: none.
    package var holdUntil: Date?
    /// The bytes the device would download: the patch it would take, else the archive.
    package var size: Int64
    /// True when those bytes are a patch (a device with `patches:SIZE` takes only patches).
    package var isPatch: Bool
    /// The release's apply deadline (its signed apply policy), when it has one.
    package var applyDeadline: Date?

    package init(now: Date, metered: Bool = false, holdUntil: Date? = nil, size: Int64, isPatch: Bool = false, applyDeadline: Date? = nil) {
        self.now = now
        self.metered = metered
        self.holdUntil = holdUntil
        self.size = size
        self.isPatch = isPatch
        self.applyDeadline = applyDeadline
    }
}

/// Why a download waits; the `reason` of a `download-deferred` report.
package enum DownloadDeferralReason: String, Sendable, Equatable, Hashable, CaseIterable {
    /// Outside every download window.
    case window
    /// The link is metered and the policy does not allow this download over it.
    case metered
    /// A page or a local process holds downloads.
    case held
}

/// A download that waits: why, until when, and the words `status --explain` shows.
package struct DownloadDeferral: Sendable, Equatable, CustomStringConvertible {
    /// The first constraint that stops it (held, then window, then metered).
    package var reason: DownloadDeferralReason
    /// Every constraint that stops it now, in that order.
    package var reasons: [DownloadDeferralReason]
    /// The first moment the clock allows it (the hold's end, the window's next opening, the
    /// apply deadline, whichever frees it first); `nil` when only the link can change it.
    package var until: Date?
    /// One line for `status --explain`.
    package var description: String

    package init(reason: DownloadDeferralReason, reasons: [DownloadDeferralReason], until: Date?, description: String) {
        self.reason = reason
        self.reasons = reasons
        self.until = until
        self.description = description
    }
}

/// The answer of ``DownloadPolicy/decide(_:)``.
package enum DownloadVerdict: Sendable, Equatable {
    /// Download now; the note says when a deadline overrode a window or a hold.
    case allowed(note: String?)
    /// Not now.
    case deferred(DownloadDeferral)
}

extension DownloadPolicy {
    /// Whether the download `request` describes may start now.
    ///
    /// Who wins (docs/download-policy.md#who-wins):
    /// 1. A **metered** link the policy does not allow (`never`; `patches:SIZE` and a full
    ///    archive or a bigger patch) defers, whatever else holds, deadline included: the owner
    ///    of the link pays for its bytes, and only a link that is not metered frees it.
    /// 2. Once the release's **apply deadline** has passed, windows and holds no longer defer
    ///    it; before, a deferral lasts at most until the deadline, so neither a window nor a
    ///    hold delays a release past its grace.
    /// 3. A **hold** in force defers until it ends.
    /// 4. Outside every **window**, the download waits for the next opening.
    package func decide(_ request: DownloadRequest) -> DownloadVerdict {
        let now = request.now
        let pastDeadline = request.applyDeadline.map { $0 <= now } ?? false
        let held = !pastDeadline && (request.holdUntil.map { $0 > now } ?? false)
        let inWindow = windows.isEmpty || windows.contains { $0.contains(now) }
        let windowDefers = !pastDeadline && !inWindow
        let meteredDefers = request.metered && !allowsMetered(size: request.size, isPatch: request.isPatch)
        var reasons: [DownloadDeferralReason] = []
        if held { reasons.append(.held) }
        if windowDefers { reasons.append(.window) }
        if meteredDefers { reasons.append(.metered) }
        guard let reason = reasons.first else {
            if pastDeadline, request.holdUntil.map({ $0 > now }) ?? false || !inWindow {
                return .allowed(note: "the apply deadline has passed: downloading now, window and hold notwithstanding")
            }
            return .allowed(note: nil)
        }
        let until = held || windowDefers ? clockAllows(after: now, holdUntil: held ? request.holdUntil : nil, deadline: request.applyDeadline) : nil
        return .deferred(
            DownloadDeferral(
                reason: reason, reasons: reasons, until: until,
                description: explain(reasons, request: request, until: until)))
    }

    /// When a download allowed at `now` must stop because the download windows close: the
    /// first instant after `now` inside no window (windows that overlap or follow each other
    /// count as one opening). Nil when nothing closes it: no windows, a window open all day,
    /// a closing beyond ``MaintenanceWindow/searchHorizon``, or an apply deadline that comes
    /// first (from the deadline on, windows no longer defer the release).
    package func windowsClose(after now: Date, applyDeadline: Date? = nil) -> Date? {
        guard !windows.isEmpty, applyDeadline.map({ $0 > now }) ?? true else { return nil }
        var instant = now
        // Each step moves to the latest closing of the windows open then: at most one step a window.
        for _ in 0...windows.count {
            let open = windows.filter { $0.contains(instant) }
            guard !open.isEmpty else { return instant > now ? instant : nil }
            let closings = open.map { $0.closing(after: instant) }
            guard closings.allSatisfy({ $0 != nil }), let latest = closings.compactMap({ $0 }).max() else { return nil }
            instant = latest
        }
        guard windows.allSatisfy({ !$0.contains(instant) }) else { return nil }
        if let applyDeadline, applyDeadline <= instant { return nil }
        return instant
    }

    /// True when a metered link allows `size` bytes (`isPatch`: a patch).
    package func allowsMetered(size: Int64, isPatch: Bool) -> Bool {
        switch metered {
        case .always: true
        case .never: false
        case .patches(let limit): isPatch && size <= limit
        }
    }

    /// The first moment at or after `now` that is past `holdUntil` and inside a window, or
    /// the deadline when that comes first; `nil` when no window opens within its horizon and
    /// no deadline frees it.
    private func clockAllows(after now: Date, holdUntil: Date?, deadline: Date?) -> Date? {
        let free = max(now, holdUntil ?? now)
        var opening: Date?
        if windows.isEmpty {
            opening = free
        } else {
            opening = windows.compactMap { $0.nextOpening(after: free) }.min()
        }
        guard let deadline, deadline > now else { return opening }
        return opening.map { min($0, deadline) } ?? deadline
    }

    /// The line `status --explain` shows.
    private func explain(_ reasons: [DownloadDeferralReason], request: DownloadRequest, until: Date?) -> String {
        var parts: [String] = []
        for reason in reasons {
            switch reason {
            case .held:
                parts.append("downloads are held until \(RFC3339Time.string(from: request.holdUntil ?? request.now))")
            case .window:
                parts.append("outside the download windows (\(windows.map(\.description).joined(separator: ", ")))")
            case .metered:
                switch metered {
                case .patches(let limit) where request.isPatch:
                    parts.append("the link is metered and the \(request.size)-byte patch is over the \(limit)-byte limit (metered patches:\(limit)B)")
                case .patches(let limit):
                    parts.append("the link is metered and takes only patches up to \(limit) bytes, not the \(request.size)-byte archive")
                default:
                    parts.append("the link is metered and the policy downloads nothing over it (metered never)")
                }
            }
        }
        let from = until.map { "may download from \(RFC3339Time.string(from: $0))" }
        let when =
            reasons.contains(.metered)
            ? "; waits for a link that is not metered" + (from.map { " (the clock \($0))" } ?? "")
            : "; \(from ?? "no window opens within 8 days")"
        let deadline = request.applyDeadline.map { "; the apply deadline \(RFC3339Time.string(from: $0)) overrides windows and holds" } ?? ""
        return "download deferred: " + parts.joined(separator: "; ") + when + (reasons.contains(.metered) ? "" : deadline)
    }
}
