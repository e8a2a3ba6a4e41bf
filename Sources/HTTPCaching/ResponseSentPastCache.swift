/// An error a transport throws when the origin's response goes to the client some other way
/// than through the engine (streamed past the cache: too large to hold, or one the cache would
/// not keep, such as a stream of server-sent events). The origin was reached: no stored response
/// stands in for it as for an unreachable origin (whatever `isConnectivityError` says), and
/// requests that joined the fetch get the error, to fetch for themselves.
package protocol ResponseSentPastCache: Error {}
