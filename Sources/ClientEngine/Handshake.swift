import ClientFoundation

/// ClientFoundation's ``ClientFoundation/Handshake`` under the name the agent's files
/// (`DeviceAgent.swift`) use without importing ClientFoundation.
package typealias Handshake<Value: Sendable> = ClientFoundation.Handshake<Value>
