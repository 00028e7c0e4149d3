import ClientFoundation
import Foundation

/// A request that failed, as the core reads it whatever module's error says so: the error
/// seam of the ``Transport`` contract.
///
/// A transport throws its own module's error (ClientUpdaterHTTP's `HTTPTransportError`, a
/// test double's); a channel's response head throws its own (`MeteorError`). The core needs
/// no more than this protocol to judge them: why the request failed below HTTP
/// (``transportFailure``), or the status it was refused with (``statusFailure``), and whether
/// trying again may succeed (``isTransient``). The `Downloader` retries on that, and says
/// what reaches its callers as ``UpdaterError`` (`.network`, `.httpStatus`), with the
/// transport's message kept, at its own boundary (the shape of swift-nio's `FileSystemError`
/// and swift-subprocess's error: one module, one error type, causes readable by others).
///
/// A module's error conforms by its code type: a `ModuleError` whose code is a
/// ``TransportFailureCode`` is `TransportFailing`, its `underlying` cause read as a
/// ``TransportFailure`` or an ``HTTPStatusFailure``.
public protocol TransportFailing: ClientctlError, Sendable {
    /// Why the request failed below HTTP (refused, reset, timed out, a refused redirect),
    /// when it did.
    var transportFailure: TransportFailure? { get }
    /// The HTTP status the request was refused with (and the server's `Retry-After`), when
    /// it was.
    var statusFailure: HTTPStatusFailure? { get }
    /// Whether trying again may succeed: a transient failure below HTTP (refused, reset,
    /// timeout, DNS, truncated body) or a 5xx, 408 or 429. Everything else is permanent.
    var isTransient: Bool { get }
}

extension TransportFailing {
    /// The HTTP status the request was refused with, if any (`error.httpStatus == 404`).
    public var httpStatus: Int? { statusFailure?.status }
}

/// The code type of a module whose errors can say that a request failed
/// (``TransportFailing``): its `.network` code is a failure below HTTP, with the
/// ``TransportFailure`` as the error's underlying cause.
public protocol TransportFailureCode: ClientctlErrorCode {
    /// A request failed below HTTP (refused, reset, timed out).
    static var network: Self { get }
}

extension ModuleError: TransportFailing where ErrorCode: TransportFailureCode {
    /// The ``TransportFailure`` behind the error, if any.
    public var transportFailure: TransportFailure? { underlying as? TransportFailure }

    /// The ``HTTPStatusFailure`` behind the error, if any.
    public var statusFailure: HTTPStatusFailure? { underlying as? HTTPStatusFailure }

    /// A `.network` error is transient as its ``TransportFailure`` says (one that names
    /// no cause may work later); another is transient when its status is.
    public var isTransient: Bool {
        if code == .network { return transportFailure?.isTransient ?? true }
        return statusFailure?.isTransient ?? false
    }

    /// A `.network` error for `url`, e.g. "GET http://…/app.tgz: connection refused": the
    /// one message of a failure below HTTP, whichever module's error says it.
    public static func network(_ url: URL, _ failure: TransportFailure) -> Self {
        Self(.network, "GET \(url.absoluteString): \(failure)", underlying: failure)
    }
}

extension UpdaterErrorCode: TransportFailureCode {}

extension UpdaterError {
    /// `error` as the core says a failed request: another module's ``TransportFailing``
    /// error becomes `.network` (its ``TransportFailure`` kept as the cause) or `.httpStatus`
    /// (its ``HTTPStatusFailure``), with its message; anything else (an `UpdaterError`
    /// already, a transport's settings error, cancellation) is returned as it is.
    package static func saying(_ error: any Error) -> any Error {
        guard !(error is UpdaterError), let failing = error as? any TransportFailing else { return error }
        if let failure = failing.transportFailure { return UpdaterError(.network, failing.message, underlying: failure) }
        if let status = failing.statusFailure { return UpdaterError(.httpStatus, failing.message, underlying: status) }
        if failing.isTransient { return UpdaterError(.network, failing.message) }
        return error
    }
}
