import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.errors.PolicyViolationException;
import org.apache.kafka.common.message.AlterClientQuotasRequestData;
import org.apache.kafka.common.message.AlterUserScramCredentialsRequestData;
import org.apache.kafka.common.message.AlterUserScramCredentialsResponseData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.requests.AlterClientQuotasRequest;
import org.apache.kafka.common.requests.AlterClientQuotasResponse;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.utils.internals.LogContext;
import org.apache.kafka.metadata.MetadataRecordSerde;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.common.MetadataVersion;
import org.apache.kafka.server.mutable.BoundedListTooLongException;
import org.apache.kafka.timeline.SnapshotRegistry;

/**
 * Kafka 4.4.0's own ScramControlManager and ClientQuotaControlManager, for
 * kraftd's interop test (scram_quotas_test.go). One JSON command a line on
 * stdin, one answer a line on stdout prefixed "R ":
 *
 *   {"level": MV, "records": [HEX...], "steps": [{"op": "scram"|"quotas",
 *    "version": V, "request": HEX}...]}
 *
 * The records (MetadataRecordSerde frames of UserScramCredentialRecord,
 * RemoveUserScramCredentialRecord, ClientQuotaRecord) are replayed into
 * fresh managers; each step's request body goes to its manager as the
 * QuorumController and ControllerApis hand it over (an empty request
 * answered without the manager, validateOnly dropping the records, a
 * BoundedListTooLongException answered POLICY_VIOLATION), and its records
 * are replayed before the next step. The answer: {"steps": [{"response":
 * HEX of the response body at V, "records": [HEX frames]}...]}.
 *
 *   {"op": "ip", "hosts": [...]}
 *
 * answers {"valid": [...]}: ClientQuotaControlManager.isValidIpEntity of
 * each (InetAddress.getByName).
 */
public class KafkaScramQuotas {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HexFormat HEX = HexFormat.of();

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        String line;
        while ((line = in.readLine()) != null) {
            ObjectNode answer;
            try {
                answer = run(JSON.readTree(line));
            } catch (Throwable e) {
                answer = JSON.createObjectNode();
                Throwable cause = e;
                while (cause instanceof InvocationTargetException && cause.getCause() != null) cause = cause.getCause();
                java.io.StringWriter sw = new java.io.StringWriter();
                cause.printStackTrace(new java.io.PrintWriter(sw));
                answer.put("fail", sw.toString());
            }
            out.println("R " + JSON.writeValueAsString(answer));
            out.flush();
        }
    }

    private static Object call(Object target, String name, Object... args) throws Exception {
        Class<?> c = target instanceof Class<?> k ? k : target.getClass();
        Object self = target instanceof Class<?> ? null : target;
        for (; c != null; c = c.getSuperclass()) {
            for (Method m : c.getDeclaredMethods()) {
                if (!m.getName().equals(name) || m.getParameterCount() != args.length) continue;
                boolean fits = true;
                for (int i = 0; i < args.length; i++) {
                    if (args[i] != null && !m.getParameterTypes()[i].isInstance(args[i])) fits = false;
                }
                if (!fits) continue;
                m.setAccessible(true);
                try {
                    return m.invoke(self, args);
                } catch (InvocationTargetException e) {
                    if (e.getCause() instanceof Exception ex) throw ex;
                    throw e;
                }
            }
        }
        throw new NoSuchMethodException(name);
    }

    private static Object build(String builder) throws Exception {
        Constructor<?> c = Class.forName(builder).getDeclaredConstructor();
        c.setAccessible(true);
        Object b = c.newInstance();
        call(b, "setSnapshotRegistry", new SnapshotRegistry(new LogContext()));
        return call(b, "build");
    }

    private static String hex(Message m, short version) {
        ObjectSerializationCache cache = new ObjectSerializationCache();
        ByteBuffer buf = ByteBuffer.allocate(m.size(cache, version));
        m.write(new ByteBufferAccessor(buf), cache, version);
        return HEX.formatHex(buf.array());
    }

    private static String frame(ApiMessageAndVersion mav) {
        ObjectSerializationCache cache = new ObjectSerializationCache();
        ByteBuffer buf = ByteBuffer.allocate(MetadataRecordSerde.INSTANCE.recordSize(mav, cache));
        MetadataRecordSerde.INSTANCE.write(mav, cache, new ByteBufferAccessor(buf));
        return HEX.formatHex(buf.array());
    }

    private static ObjectNode run(JsonNode cmd) throws Exception {
        ObjectNode o = JSON.createObjectNode();
        if (cmd.path("op").asText().equals("ip")) {
            ArrayNode valid = o.putArray("valid");
            Class<?> cq = Class.forName("org.apache.kafka.controller.ClientQuotaControlManager");
            for (JsonNode h : cmd.path("hosts")) valid.add((Boolean) call(cq, "isValidIpEntity", h.asText()));
            return o;
        }
        Object scram = build("org.apache.kafka.controller.ScramControlManager$Builder");
        Object quotas = build("org.apache.kafka.controller.ClientQuotaControlManager$Builder");
        MetadataVersion mv = MetadataVersion.fromFeatureLevel((short) cmd.get("level").asInt());
        replay(scram, quotas, cmd.path("records"));
        ArrayNode steps = o.putArray("steps");
        for (JsonNode st : cmd.path("steps")) {
            ObjectNode answer = step(scram, quotas, mv, st);
            steps.add(answer);
            replay(scram, quotas, answer.path("records"));
        }
        return o;
    }

    private static void replay(Object scram, Object quotas, JsonNode records) throws Exception {
        for (JsonNode r : records) {
            byte[] b = HEX.parseHex(r.asText());
            ApiMessageAndVersion mav = MetadataRecordSerde.INSTANCE.read(new ByteBufferAccessor(ByteBuffer.wrap(b)), b.length);
            ApiMessage msg = mav.message();
            switch (msg.getClass().getSimpleName()) {
                case "ClientQuotaRecord" -> call(quotas, "replay", msg);
                case "UserScramCredentialRecord", "RemoveUserScramCredentialRecord" -> call(scram, "replay", msg);
                default -> { } // the metadata.version is given as "level"
            }
        }
    }

    @SuppressWarnings("unchecked")
    private static ObjectNode step(Object scram, Object quotas, MetadataVersion mv, JsonNode cmd) throws Exception {
        short version = (short) cmd.get("version").asInt();
        byte[] body = HEX.parseHex(cmd.get("request").asText());
        ByteBufferAccessor acc = new ByteBufferAccessor(ByteBuffer.wrap(body));
        ObjectNode o = JSON.createObjectNode();
        ArrayNode recs = o.putArray("records");
        List<ApiMessageAndVersion> written = List.of();
        Message response;
        if (cmd.get("op").asText().equals("scram")) {
            AlterUserScramCredentialsRequestData req = new AlterUserScramCredentialsRequestData(acc, version);
            if (req.deletions().isEmpty() && req.upsertions().isEmpty()) { // QuorumController's own answer
                response = new AlterUserScramCredentialsResponseData();
            } else {
                Object result = call(scram, "alterCredentials", req, mv);
                response = (Message) call(result, "response");
                written = (List<ApiMessageAndVersion>) call(result, "records");
            }
        } else {
            AlterClientQuotasRequest req = new AlterClientQuotasRequest(new AlterClientQuotasRequestData(acc, version), version);
            List<ClientQuotaAlteration> entries = req.entries();
            if (entries.isEmpty()) { // QuorumController's own answer
                response = AlterClientQuotasResponse.fromQuotaEntities(Map.of(), 0).data();
            } else {
                try {
                    Object result = call(quotas, "alterClientQuotas", entries);
                    response = AlterClientQuotasResponse.fromQuotaEntities(
                        (Map<ClientQuotaEntity, ApiError>) call(result, "response"), 0).data();
                    if (!req.validateOnly()) written = (List<ApiMessageAndVersion>) call(result, "records");
                } catch (BoundedListTooLongException e) {
                    // As the controller's event handler answers it
                    // (EventHandlerExceptionInfo), through ControllerApis' handleError.
                    response = req.getErrorResponse(0,
                        new PolicyViolationException("Unable to perform excessively large batch operation.")).data();
                }
            }
        }
        for (ApiMessageAndVersion mav : written) recs.add(frame(mav));
        o.put("response", hex(response, version));
        return o;
    }
}
