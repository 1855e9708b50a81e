package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kraftd/kraftd/admin"
	"github.com/kraftd/kraftd/uuid"
)

// The quorum commands print what kafka-metadata-quorum prints, so scripts
// written against Kafka's tool read kraftd's the same way. This file holds
// the two places where that text comes from Java itself: Uuid.fromString's
// errors and an exception's toString.

// toolError is a failure whose text Kafka's tool prints alone on stderr
// (its TerseException, or the first line of an exception); run prints it
// without the command prefix and exits 1.
type toolError struct{ msg string }

func (e toolError) Error() string { return e.msg }

// parseJavaUUID parses s as Kafka's Uuid.fromString does (Java's base64url
// decoder, then exactly 16 bytes), failing with the same messages.
func parseJavaUUID(s string) (uuid.UUID, error) {
	if len(s) > 24 {
		return uuid.Zero, fmt.Errorf("Input string with prefix `%s` is too long to be decoded as a base64 UUID", s[:24])
	}
	n, err := javaBase64Len(s)
	if err != nil {
		return uuid.Zero, err
	}
	if n != 16 {
		return uuid.Zero, fmt.Errorf("Input string `%s` decoded as %d bytes, which is not equal to the expected 16 bytes of a base64-encoded UUID", s, n)
	}
	// Java accepted it: 22 characters, or 24 ending "==", which Parse takes.
	return uuid.Parse(s)
}

// javaBase64Len is how many bytes java.util.Base64.getUrlDecoder().decode(s)
// returns, or its IllegalArgumentException message.
func javaBase64Len(s string) (int, error) {
	src := latin1(s)
	if len(src) == 1 {
		return 0, errors.New("Input byte[] should at least have 2 bytes for base64 bytes")
	}
	out, shift, i := 0, 18, 0
	for i < len(src) {
		c := src[i]
		i++
		if c == '=' {
			// Padding ends the input; it must complete the 4-char unit.
			if shift == 6 && (i == len(src) || src[i] != '=') || shift == 18 {
				return 0, errors.New("Input byte array has wrong 4-byte ending unit")
			}
			if shift == 6 {
				i++
			}
			break
		}
		if !isBase64URL(c) {
			return 0, fmt.Errorf("Illegal base64 character %s", strconv.FormatInt(int64(int8(c)), 16))
		}
		if shift -= 6; shift < 0 {
			out, shift = out+3, 18
		}
	}
	switch shift {
	case 6:
		out++
	case 0:
		out += 2
	case 12:
		return 0, errors.New("Last unit does not have enough valid bits")
	}
	if i < len(src) {
		return 0, fmt.Errorf("Input byte array has incorrect ending byte at %d", i)
	}
	return out, nil
}

// latin1 is String.getBytes(ISO_8859_1): one byte a character, '?' for
// characters beyond U+00FF.
func latin1(s string) []byte {
	var b []byte
	for _, r := range s {
		if r > 0xff {
			r = '?'
		}
		b = append(b, byte(r))
	}
	return b
}

func isBase64URL(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

// javaExceptions names the exception classes of error codes whose name is
// not the code's own in CamelCase (Kafka's Errors enum).
var javaExceptions = map[int16]string{
	kerr.UnknownServerError.Code:         "UnknownServerException",
	kerr.RequestTimedOut.Code:            "TimeoutException",
	kerr.NetworkException.Code:           "NetworkException",
	kerr.StaleControllerEpoch.Code:       "ControllerMovedException",
	kerr.ClusterAuthorizationFailed.Code: "ClusterAuthorizationException",
	kerr.KafkaStorageError.Code:          "KafkaStorageException",
	kerr.SaslAuthenticationFailed.Code:   "SaslAuthenticationException",
}

// javaExceptionText renders an error answer as Java's Throwable.toString of
// the exception Kafka's admin client raises for it: the class, then the
// server's message or else the code's default one.
func javaExceptionText(e *admin.ResponseError) string {
	ke, _ := kerr.ErrorForCode(e.Code).(*kerr.Error)
	class, ok := javaExceptions[e.Code]
	if !ok {
		var b strings.Builder
		for _, w := range strings.Split(ke.Message, "_") {
			b.WriteString(w[:1] + strings.ToLower(w[1:]))
		}
		class = strings.TrimSuffix(b.String(), "Exception") + "Exception"
	}
	return "org.apache.kafka.common.errors." + class + ": " + javaExceptionMessage(e)
}

// javaExceptionMessage is the exception's getMessage: the server's message
// or the code's default one.
func javaExceptionMessage(e *admin.ResponseError) string {
	if e.Message != nil {
		return *e.Message
	}
	ke, _ := kerr.ErrorForCode(e.Code).(*kerr.Error)
	return ke.Description
}
