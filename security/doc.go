// Package security is kraftd's listener and peer-connection security as
// Kafka 4.4 configures it: the security protocol of each listener, SSL
// material, and SASL, as pure logic the network layer drives. It opens no
// sockets; it reads the key and trust store files it is pointed at.
//
// Resolution (protocol.go, settings.go). ProtocolMap reads
// listener.security.protocol.map as Kafka's effectiveListenerSecurityProtocolMap
// (default map; controller listeners mapped to PLAINTEXT when the map is
// unset and no SSL/SASL name is in use). ResolveServer gives one listener's
// settings, ResolveClient those of outbound connections to voters (the
// first controller listener's). Each key is looked up as
// listener.name.<lower-case listener>.<key>, then <key>, as Kafka's
// valuesWithPrefixOverride; JAAS text only under
// listener.name.<l>.<mechanism>.sasl.jaas.config (kraftd reads no JAAS
// file); on SASL_SSL ssl.client.auth counts only listener-prefixed. Errors
// use Kafka's words where Kafka has them and name the key that supplied the
// value, never a password.
//
// TLS (tls.go, keystore.go). NewTLSMaterial loads JKS or PKCS12 stores
// (format taken from the bytes, as Java's keystore.type.compat), PEM files
// or inline PEM (PKCS#8 keys; with ssl.key.password set the key must be
// encrypted, as Kafka requires, and kraftd decrypts PBES2, the openssl
// default, while Kafka on Java 17 decrypts only legacy PBES1: for keys
// every node of a mixed quorum reads, use unencrypted PEM, JKS or PKCS12), and
// maps ssl.enabled.protocols, ssl.protocol and ssl.cipher.suites to
// crypto/tls. ServerConfig serves ssl.client.auth none/requested/required;
// ClientConfig(host) verifies the server's host name when
// ssl.endpoint.identification.algorithm is https and only the chain when
// it is empty. Reload: on new handshakes, at most once a second, the store
// files are re-read when their content changed; a store that fails to load
// keeps the previous material and is logged once. (Kafka reloads only when
// an AlterConfigs call sets the key store again.)
//
// SASL (jaas.go, sasl_server.go, sasl_client.go, scram.go). ParseJAAS reads
// Kafka's JAAS syntax. Authenticator is the server side of one connection:
// SaslHandshake v0-1 and SaslAuthenticate v0-2 with PLAIN (users from the
// JAAS user_<name> options) and SCRAM-SHA-256/512 (credentials from a
// ScramStore, verified by github.com/xdg-go/scram), Kafka's error codes and
// messages, SessionLifetimeMs from connections.max.reauth.ms and
// re-authentication on a later SaslHandshake. The network layer hands it
// each frame until Authenticated, answering only what AllowedBeforeAuth
// allows; Outcome says what to send and whether to close. SASLClient drives
// franz-go's client mechanisms for outbound connections.
//
// Driving it (the network layer). At start: config.New has resolved
// Config.ListenerSecurity and Config.OutboundSecurity; NewServerSide per
// controller listener (one ScramStore for all, filled by ApplyBatches from
// the bootstrap snapshot and by ApplyMetadataRecord as records commit) and
// NewClientSide for voters. Accepting: wrap the conn with
// tls.Server(conn, side.TLSConfig()) when TLS; when side.NewAuthenticator()
// is not nil, read frames of at most MaxReceiveSize (else Oversized) and
// hand each to RawToken when ExpectsRawToken, else to Request with the
// header's key and version and the kmsg request protocol.ParseRequest
// decoded (Unparsable when it fails; a nil request for an ApiVersions
// version kraftd does not serve); act on the Outcome; nothing reaches the
// raft core until Authenticated. After that, a SaslHandshake or
// SaslAuthenticate still goes to Request; any other request on a connection
// whose SessionExpired closes it. Refusals go to one FailureLog line.
// Dialing: tls.Client(conn, side.TLSConfig(host)), then NewSASLClient's
// Handshake/OnHandshake/OnAuthenticate; re-authenticate after ReauthDelay of
// the granted lifetime.
//
// SCRAM credentials. Kafka 4.4 controllers verify SCRAM logins against
// UserScramCredentialRecords in the metadata log (written into the
// bootstrap snapshot by kafka-storage format --add-scram, later by
// AlterUserScramCredentials), never against JAAS text; JAAS user_<name>
// entries serve PLAIN only. kraftd does the same: ScramStore holds the
// credentials, ApplyBatches fills it from the bootstrap snapshot's batches
// and ApplyMetadataRecord from each committed record value (other record
// types are ignored), so kraftd and Kafka controllers of one quorum accept
// the same SCRAM users. NewScramCredential derives what
// kafka-storage format --add-scram writes (4096 iterations minimum).
package security
