import NIOCore

/// A body already in memory (a cached small file, a short text), handed to a consumer
/// outside Swift without a copy: ``retain()`` gives its bytes' address and a retained
/// owner that keeps them alive until ``release(_:)`` (WebKit's `GBytes` free function).
package struct HeldBytes: Sendable {
    let buffer: ByteBuffer

    init(_ buffer: ByteBuffer) { self.buffer = buffer }

    package init(_ text: String) { self.buffer = ByteBuffer(string: text) }

    package var count: Int { buffer.readableBytes }

    /// The readable bytes and one retain of the storage that holds them: the address stays
    /// valid until the owner is given to ``release(_:)`` (the buffer is never written again).
    package func retain() -> (bytes: UnsafeRawPointer?, count: Int, owner: UnsafeMutableRawPointer) {
        buffer.withUnsafeReadableBytesWithStorageManagement { raw, storage in
            (UnsafeRawPointer(raw.baseAddress), raw.count, storage.retain().toOpaque())
        }
    }

    /// Gives back an owner from ``retain()``.
    package static func release(_ owner: UnsafeMutableRawPointer) {
        Unmanaged<AnyObject>.fromOpaque(owner).release()
    }
}

extension FileAnswer.Body {
    /// The body's bytes when they are in memory.
    package var heldBytes: HeldBytes? {
        if case .bytes(let buffer) = self { return HeldBytes(buffer) }
        return nil
    }
}
