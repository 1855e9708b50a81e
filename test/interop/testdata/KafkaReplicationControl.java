import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.Random;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import kafka.server.ControllerConfigurationValidator;
import kafka.server.KafkaConfig;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.message.AlterPartitionRequestData;
import org.apache.kafka.common.message.CreatePartitionsRequestData;
import org.apache.kafka.common.message.CreatePartitionsResponseData;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.DeleteTopicsRequestData;
import org.apache.kafka.common.message.DeleteTopicsResponseData;
import org.apache.kafka.common.message.DeleteTopicsResponseData.DeletableTopicResult;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.requests.DeleteTopicsRequest;
import org.apache.kafka.common.message.ElectLeadersRequestData;
import org.apache.kafka.common.message.ElectLeadersResponseData;
import org.apache.kafka.common.message.RequestHeaderData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.requests.AlterPartitionRequest;
import org.apache.kafka.common.requests.CreatePartitionsRequest;
import org.apache.kafka.common.requests.CreateTopicsRequest;
import org.apache.kafka.common.requests.ElectLeadersRequest;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.utils.internals.LogContext;
import org.apache.kafka.controller.ControllerRequestContext;
import org.apache.kafka.controller.QuorumFeatures;
import org.apache.kafka.metadata.KafkaConfigSchema;
import org.apache.kafka.metadata.MetadataRecordSerde;
import org.apache.kafka.metadata.SupportedConfigChecker;
import org.apache.kafka.metadata.placement.StripedReplicaPlacer;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.config.ServerTopicConfigSynonyms;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.timeline.SnapshotRegistry;

/**
 * Kafka 4.4.0's own ReplicationControlManager (with its ClusterControlManager,
 * FeatureControlManager, ConfigurationControlManager and
 * ProducerIdControlManager, built as Kafka's own tests build them), for
 * kraftd's interop test (replication_control_test.go). One JSON command a
 * line on stdin, one answer a line on stdout prefixed "R ":
 *
 *   {"op": "create"|"alter"|"partitions"|"elect"|"pids"|"delete"|"dirs", "seed": S,
 *    "numPartitions": N, "rf": R, "static": {...}, "records": [HEX...],
 *    "version": V, "request": HEX}
 *
 * The records (MetadataRecordSerde frames) are replayed into fresh managers,
 * the placer drawing from new Random(S); the request body (HEX, at version
 * V) goes to the manager's operation; a request-wide exception becomes the
 * request's own error response, as the controller's API layer answers it.
 * The answer: {"response": HEX of the response body at V, "records": [HEX
 * frames]} or {"fail": stack trace}. With "steps": [{"op", "version",
 * "request"}...] instead, the steps run in turn on the same managers and
 * placer, each step's records replayed before the next, and the answer is
 * {"steps": [answers]}. "balance" and "unclean" run the periodic election
 * tasks (whether to run again as an ElectLeaders response's error code).
 */
public class KafkaReplicationControl {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HexFormat HEX = HexFormat.of();
    private static final Map<String, KafkaConfig> KAFKA_CONFIGS = new HashMap<>();

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
        for (Class<?> c = target.getClass(); c != null; c = c.getSuperclass()) {
            outer:
            for (Method m : c.getDeclaredMethods()) {
                if (!m.getName().equals(name) || m.getParameterCount() != args.length) continue;
                Class<?>[] ps = m.getParameterTypes();
                for (int i = 0; i < ps.length; i++) {
                    if (args[i] != null && !box(ps[i]).isInstance(args[i])) continue outer;
                }
                m.setAccessible(true);
                try {
                    return m.invoke(target, args);
                } catch (InvocationTargetException e) {
                    // As the controller's event handler answers it
                    // (EventHandlerExceptionInfo).
                    if (e.getCause() instanceof org.apache.kafka.server.mutable.BoundedListTooLongException) {
                        throw new org.apache.kafka.common.errors.PolicyViolationException(
                            "Unable to perform excessively large batch operation.");
                    }
                    if (e.getCause() instanceof Exception ex) throw ex;
                    throw e;
                }
            }
        }
        throw new NoSuchMethodException(name);
    }

    private static Class<?> box(Class<?> c) {
        if (!c.isPrimitive()) return c;
        if (c == int.class) return Integer.class;
        if (c == long.class) return Long.class;
        if (c == short.class) return Short.class;
        if (c == boolean.class) return Boolean.class;
        if (c == byte.class) return Byte.class;
        return c;
    }

    private static Object newRequest(Class<?> c, Object data, short version) throws Exception {
        for (Constructor<?> k : c.getDeclaredConstructors()) {
            if (k.getParameterCount() == 2) {
                k.setAccessible(true);
                return k.newInstance(data, version);
            }
        }
        throw new NoSuchMethodException(c.getName());
    }

    private static Object construct(String className) throws Exception {
        Constructor<?> c = Class.forName(className).getDeclaredConstructor();
        c.setAccessible(true);
        return c.newInstance();
    }

    private static Map<String, String> strings(JsonNode n) {
        Map<String, String> m = new HashMap<>();
        if (n != null) n.fields().forEachRemaining(e -> m.put(e.getKey(), e.getValue().asText()));
        return m;
    }

    private static KafkaConfig kafkaConfig(Map<String, String> statics) {
        return KAFKA_CONFIGS.computeIfAbsent(new java.util.TreeMap<>(statics).toString(), s -> {
            Properties p = new Properties();
            p.put("process.roles", "controller");
            p.put("node.id", "1");
            p.put("controller.quorum.voters", "1@localhost:9093");
            p.put("controller.listener.names", "CONTROLLER");
            p.put("listeners", "CONTROLLER://localhost:9093");
            p.putAll(statics);
            return new KafkaConfig(p);
        });
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

    @SuppressWarnings("unchecked")
    private static ObjectNode run(JsonNode cmd) throws Exception {
        Map<String, String> statics = strings(cmd.get("static"));
        LogContext logContext = new LogContext();
        SnapshotRegistry registry = new SnapshotRegistry(logContext);
        Object fb = construct("org.apache.kafka.controller.FeatureControlManager$Builder");
        call(fb, "setSnapshotRegistry", registry);
        call(fb, "setQuorumFeatures", new QuorumFeatures(1, QuorumFeatures.defaultSupportedFeatureMap(true), List.of(1)));
        Object features = call(fb, "build");

        KafkaConfigSchema schema = new KafkaConfigSchema(
            Map.of(ConfigResource.Type.TOPIC, LogConfig.configDefCopy(), ConfigResource.Type.BROKER, KafkaConfig.configDef()),
            ServerTopicConfigSynonyms.ALL_TOPIC_CONFIG_SYNONYMS);
        Object cb = construct("org.apache.kafka.controller.ConfigurationControlManager$Builder");
        call(cb, "setSnapshotRegistry", registry);
        call(cb, "setKafkaConfigSchema", schema);
        call(cb, "setValidator", new ControllerConfigurationValidator(kafkaConfig(statics)));
        call(cb, "setStaticConfig", new HashMap<String, Object>(statics));
        call(cb, "setNodeId", 1);
        call(cb, "setFeatureControl", features);
        call(cb, "setSupportedConfigChecker", SupportedConfigChecker.TRUE);
        call(cb, "setExistenceChecker", (java.util.function.Consumer<ConfigResource>) r -> { });
        call(cb, "setAlterConfigPolicy", Optional.empty());
        Object configs = call(cb, "build");

        Class<?> handler = Class.forName("org.apache.kafka.controller.ClusterControlManager$BrokerShutdownHandler");
        Object shutdown = Proxy.newProxyInstance(handler.getClassLoader(), new Class<?>[] {handler}, (p, m, a) -> null);
        Object kb = construct("org.apache.kafka.controller.ClusterControlManager$Builder");
        call(kb, "setLogContext", logContext);
        call(kb, "setClusterId", "kraftd-interop");
        call(kb, "setTime", org.apache.kafka.common.utils.Time.SYSTEM);
        call(kb, "setSnapshotRegistry", registry);
        call(kb, "setSessionTimeoutNs", 9_000_000_000L);
        call(kb, "setReplicaPlacer", new StripedReplicaPlacer(new Random(cmd.get("seed").asLong())));
        call(kb, "setFeatureControlManager", features);
        call(kb, "setBrokerShutdownHandler", shutdown);
        Object cluster = call(kb, "build");

        Object rb = construct("org.apache.kafka.controller.ReplicationControlManager$Builder");
        call(rb, "setSnapshotRegistry", registry);
        call(rb, "setLogContext", logContext);
        call(rb, "setDefaultReplicationFactor", (short) cmd.get("rf").asInt());
        call(rb, "setDefaultNumPartitions", cmd.get("numPartitions").asInt());
        call(rb, "setMaxElectionsPerImbalance", 1000);
        call(rb, "setConfigurationControl", configs);
        call(rb, "setClusterControl", cluster);
        call(rb, "setCreateTopicPolicy", Optional.empty());
        call(rb, "setFeatureControl", features);
        Object rcm = call(rb, "build");

        Object pb = construct("org.apache.kafka.controller.ProducerIdControlManager$Builder");
        call(pb, "setLogContext", logContext);
        call(pb, "setSnapshotRegistry", registry);
        call(pb, "setClusterControlManager", cluster);
        Object pids = call(pb, "build");

        call(cluster, "activate");
        Object[] m = {features, configs, cluster, rcm, pids};
        replay(m, cmd.path("records"));
        if (!cmd.has("steps")) return step(m, cmd);
        // A chain: each step on the managers the previous steps' records
        // were replayed into (and on the same placer).
        ObjectNode o = JSON.createObjectNode();
        ArrayNode steps = o.putArray("steps");
        for (JsonNode st : cmd.path("steps")) {
            ObjectNode answer = step(m, st);
            steps.add(answer);
            replay(m, answer.path("records"));
        }
        return o;
    }

    private static long offset;

    private static void replay(Object[] m, JsonNode records) throws Exception {
        Object features = m[0], configs = m[1], cluster = m[2], rcm = m[3], pids = m[4];
        for (JsonNode r : records) {
            byte[] b = HEX.parseHex(r.asText());
            ApiMessageAndVersion mav = MetadataRecordSerde.INSTANCE.read(new ByteBufferAccessor(ByteBuffer.wrap(b)), b.length);
            ApiMessage msg = mav.message();
            switch (msg.getClass().getSimpleName()) {
                case "FeatureLevelRecord" -> call(features, "replay", msg);
                case "RegisterBrokerRecord" -> call(cluster, "replay", msg, offset);
                case "FenceBrokerRecord", "UnfenceBrokerRecord", "BrokerRegistrationChangeRecord" -> call(cluster, "replay", msg);
                case "ConfigRecord" -> call(configs, "replay", msg);
                case "ProducerIdsRecord" -> call(pids, "replay", msg);
                default -> call(rcm, "replay", msg);
            }
            offset++;
        }
    }

    @SuppressWarnings("unchecked")
    private static ObjectNode step(Object[] m, JsonNode cmd) throws Exception {
        Object features = m[0], configs = m[1], cluster = m[2], rcm = m[3], pids = m[4];
        short version = (short) cmd.get("version").asInt();
        byte[] body = HEX.parseHex(cmd.get("request").asText());
        ByteBufferAccessor acc = new ByteBufferAccessor(ByteBuffer.wrap(body));
        ObjectNode o = JSON.createObjectNode();
        ArrayNode recs = o.putArray("records");
        String op = cmd.get("op").asText();
        short apiKey = switch (op) {
            case "create" -> 19;
            case "partitions" -> 37;
            case "elect" -> 43;
            case "alter" -> 56;
            case "delete" -> 20;
            case "dirs" -> 73;
            default -> 67;
        };
        ControllerRequestContext ctx = new ControllerRequestContext(
            new RequestHeaderData().setRequestApiKey(apiKey).setRequestApiVersion(version),
            KafkaPrincipal.ANONYMOUS, OptionalLong.empty());
        Object result;
        Message response;
        try {
            switch (op) {
                case "create" -> {
                    CreateTopicsRequestData req = new CreateTopicsRequestData(acc, version);
                    Set<String> names = new HashSet<>();
                    req.topics().forEach(t -> names.add(t.name()));
                    try {
                        result = call(rcm, "createTopics", ctx, req, names, false);
                        response = (Message) call(result, "response");
                    } catch (ApiException e) {
                        result = null;
                        response = new CreateTopicsRequest(req, version).getErrorResponse(0, e).data();
                    }
                }
                case "alter" -> {
                    AlterPartitionRequestData req = new AlterPartitionRequestData(acc, version);
                    if (req.topics().isEmpty()) { // QuorumController's own answer
                        result = null;
                        response = new org.apache.kafka.common.message.AlterPartitionResponseData();
                    } else try {
                        result = call(rcm, "alterPartition", ctx, req);
                        response = (Message) call(result, "response");
                    } catch (ApiException e) {
                        result = null;
                        response = new AlterPartitionRequest(req, version).getErrorResponse(0, e).data();
                    }
                }
                case "partitions" -> {
                    CreatePartitionsRequestData req = new CreatePartitionsRequestData(acc, version);
                    try {
                        // ControllerApis.createPartitions: names given twice
                        // answered first, the rest in HashSet order.
                        CreatePartitionsResponseData d = new CreatePartitionsResponseData();
                        Set<String> names = new HashSet<>();
                        Set<String> dups = new HashSet<>();
                        req.topics().forEach(t -> {
                            if (!names.add(t.name())) dups.add(t.name());
                        });
                        for (String n : dups) {
                            d.results().add(new CreatePartitionsResponseData.CreatePartitionsTopicResult().setName(n)
                                .setErrorCode(org.apache.kafka.common.protocol.Errors.INVALID_REQUEST.code())
                                .setErrorMessage("Duplicate topic name."));
                            names.remove(n);
                        }
                        List<CreatePartitionsRequestData.CreatePartitionsTopic> topics = new java.util.ArrayList<>();
                        names.forEach(n -> topics.add(req.topics().find(n)));
                        result = call(rcm, "createPartitions", ctx, topics);
                        d.results().addAll((List<CreatePartitionsResponseData.CreatePartitionsTopicResult>) call(result, "response"));
                        response = d;
                        if (req.validateOnly()) result = null;
                    } catch (ApiException e) {
                        result = null;
                        response = new CreatePartitionsRequest.Builder(req).build(version).getErrorResponse(0, e).data();
                    }
                }
                case "elect" -> {
                    ElectLeadersRequestData req = new ElectLeadersRequestData(acc, version);
                    if (req.topicPartitions() != null && req.topicPartitions().isEmpty()) { // QuorumController's own answer
                        result = null;
                        response = new ElectLeadersResponseData();
                    } else try {
                        result = call(rcm, "electLeaders", req);
                        response = (Message) call(result, "response");
                    } catch (ApiException e) {
                        result = null;
                        response = ((ElectLeadersRequest) newRequest(ElectLeadersRequest.class, req, version)).getErrorResponse(0, e).data();
                    }
                }
                case "balance", "unclean" -> {
                    // The periodic tasks; the request is a placeholder.
                    result = call(rcm, op.equals("balance") ? "maybeBalancePartitionLeaders" : "maybeElectUncleanLeaders");
                    response = new org.apache.kafka.common.message.ElectLeadersResponseData()
                        .setErrorCode((Boolean) call(result, "response") ? (short) 1 : (short) 0);
                }
                case "dirs" -> {
                    org.apache.kafka.common.message.AssignReplicasToDirsRequestData req =
                        new org.apache.kafka.common.message.AssignReplicasToDirsRequestData(acc, version);
                    try {
                        result = call(rcm, "handleAssignReplicasToDirs", req);
                        response = (Message) call(result, "response");
                    } catch (ApiException e) {
                        result = null;
                        response = new org.apache.kafka.common.requests.AssignReplicasToDirsRequest(req, version).getErrorResponse(0, e).data();
                    }
                }
                case "delete" -> {
                    DeleteTopicsRequestData req = new DeleteTopicsRequestData(acc, version);
                    response = deleteTopics(rcm, ctx, req, version, cmd.path("deleteDisabled").asBoolean(), recs);
                    result = null;
                }
                default -> {
                    org.apache.kafka.common.message.AllocateProducerIdsRequestData req =
                        new org.apache.kafka.common.message.AllocateProducerIdsRequestData(acc, version);
                    try {
                        result = call(pids, "generateNextProducerId", req.brokerId(), req.brokerEpoch());
                        org.apache.kafka.server.common.ProducerIdsBlock block =
                            (org.apache.kafka.server.common.ProducerIdsBlock) call(result, "response");
                        response = new org.apache.kafka.common.message.AllocateProducerIdsResponseData()
                            .setProducerIdStart(block.firstProducerId()).setProducerIdLen(block.size());
                    } catch (ApiException e) {
                        result = null;
                        response = new org.apache.kafka.common.requests.AllocateProducerIdsRequest.Builder(req).build(version)
                            .getErrorResponse(0, e).data();
                    }
                }
            }
        } catch (ApiException e) {
            throw e;
        }
        if (result != null) {
            for (ApiMessageAndVersion mav : (List<ApiMessageAndVersion>) call(result, "records")) recs.add(frame(mav));
        }
        o.put("response", hex(response, version));
        return o;
    }

    /**
     * ControllerApis.deleteTopics (Scala in 4.4.0) with every topic
     * authorized, over the manager's own findTopicNames, findTopicIds and
     * deleteTopics. The answers are not shuffled (the test sorts them).
     */
    @SuppressWarnings("unchecked")
    private static Message deleteTopics(Object rcm, ControllerRequestContext ctx, DeleteTopicsRequestData req, short version,
                                        boolean disabled, ArrayNode recs) throws Exception {
        DeleteTopicsResponseData data = new DeleteTopicsResponseData();
        if (disabled) {
            ApiException e = version < 3
                ? new org.apache.kafka.common.errors.InvalidRequestException("This version does not support topic deletion.")
                : new org.apache.kafka.common.errors.TopicDeletionDisabledException();
            return new DeleteTopicsRequest.Builder(req).build(version).getErrorResponse(0, e).data();
        }
        List<DeletableTopicResult> responses = new java.util.ArrayList<>();
        java.util.function.BiConsumer<String, Map.Entry<Uuid, ApiError>> append = (name, e) ->
            responses.add(new DeletableTopicResult().setName(name).setTopicId(e.getKey())
                .setErrorCode(e.getValue().error().code()).setErrorMessage(e.getValue().message()));
        HashSet<String> providedNames = new HashSet<>();
        HashSet<String> duplicateProvidedNames = new HashSet<>();
        HashSet<Uuid> providedIds = new HashSet<>();
        HashSet<Uuid> duplicateProvidedIds = new HashSet<>();
        java.util.function.Consumer<String> addProvidedName = name -> {
            if (duplicateProvidedNames.contains(name) || !providedNames.add(name)) {
                duplicateProvidedNames.add(name);
                providedNames.remove(name);
            }
        };
        req.topicNames().forEach(addProvidedName);
        for (DeleteTopicsRequestData.DeleteTopicState topic : req.topics()) {
            if (topic.name() == null) {
                if (topic.topicId().equals(Uuid.ZERO_UUID)) {
                    append.accept(null, Map.entry(Uuid.ZERO_UUID, new ApiError(Errors.INVALID_REQUEST, "Neither topic name nor id were specified.")));
                } else if (duplicateProvidedIds.contains(topic.topicId()) || !providedIds.add(topic.topicId())) {
                    duplicateProvidedIds.add(topic.topicId());
                    providedIds.remove(topic.topicId());
                }
            } else if (topic.topicId().equals(Uuid.ZERO_UUID)) {
                addProvidedName.accept(topic.name());
            } else {
                append.accept(topic.name(), Map.entry(topic.topicId(), new ApiError(Errors.INVALID_REQUEST, "You may not specify both topic name and topic id.")));
            }
        }
        duplicateProvidedNames.forEach(name -> append.accept(name, Map.entry(Uuid.ZERO_UUID, new ApiError(Errors.INVALID_REQUEST, "Duplicate topic name."))));
        duplicateProvidedIds.forEach(id -> append.accept(null, Map.entry(id, new ApiError(Errors.INVALID_REQUEST, "Duplicate topic id."))));
        HashMap<Uuid, String> idToName = new HashMap<>();
        Map<Uuid, Object> names = (Map<Uuid, Object>) call(rcm, "findTopicNames", Long.MAX_VALUE, providedIds);
        for (Map.Entry<Uuid, Object> e : names.entrySet()) {
            if ((boolean) call(e.getValue(), "isError")) {
                append.accept(null, Map.entry(e.getKey(), (ApiError) call(e.getValue(), "error")));
            } else {
                idToName.put(e.getKey(), (String) call(e.getValue(), "result"));
            }
        }
        Map<String, Object> ids = (Map<String, Object>) call(rcm, "findTopicIds", Long.MAX_VALUE, providedNames);
        for (Map.Entry<String, Object> e : ids.entrySet()) {
            String name = e.getKey();
            if ((boolean) call(e.getValue(), "isError")) {
                append.accept(name, Map.entry(Uuid.ZERO_UUID, (ApiError) call(e.getValue(), "error")));
            } else {
                Uuid id = (Uuid) call(e.getValue(), "result");
                if (duplicateProvidedIds.contains(id) || idToName.put(id, name) != null) {
                    duplicateProvidedIds.add(id);
                    idToName.remove(id);
                    append.accept(name, Map.entry(id, new ApiError(Errors.INVALID_REQUEST, "The provided topic name maps to an ID that was already supplied.")));
                }
            }
        }
        if (!idToName.isEmpty()) { // QuorumController.deleteTopics answers an empty set itself
            Object result = call(rcm, "deleteTopics", ctx, idToName.keySet());
            ((Map<Uuid, ApiError>) call(result, "response")).forEach((id, err) -> append.accept(idToName.get(id), Map.entry(id, err)));
            for (ApiMessageAndVersion mav : (List<ApiMessageAndVersion>) call(result, "records")) recs.add(frame(mav));
        }
        // As ControllerApis.handleDeleteTopics builds its answer.
        return data.setResponses(new DeleteTopicsResponseData.DeletableTopicResultCollection(responses.iterator()));
    }
}
