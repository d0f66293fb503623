package needle.bench;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.document.DoubleField;
import org.apache.lucene.document.LongField;
import org.apache.lucene.index.DocValues;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.SortedNumericDocValues;
import org.apache.lucene.index.SortedSetDocValues;
import org.apache.lucene.index.StoredFields;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.Collector;
import org.apache.lucene.search.CollectorManager;
import org.apache.lucene.search.FieldDoc;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.LeafCollector;
import org.apache.lucene.search.MatchAllDocsQuery;
import org.apache.lucene.search.MatchNoDocsQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.Scorable;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.ScoreMode;
import org.apache.lucene.search.Sort;
import org.apache.lucene.search.SortField;
import org.apache.lucene.search.SortedNumericSelector;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.TopFieldCollectorManager;
import org.apache.lucene.search.TopScoreDocCollectorManager;
import org.apache.lucene.util.BytesRef;
import org.apache.lucene.util.NumericUtils;
import org.apache.lucene.util.QueryBuilder;

/**
 * The {@code values} mode of bench/PROTOCOL.md: a search body in Elasticsearch's DSL (the subset
 * {@code needle-bench values} sends) run the way Elasticsearch runs it on Lucene, in-process.
 *
 * <p>Queries: {@code match_all}, {@code match_none}, {@code match} (one field, terms OR'ed, {@link QueryBuilder} with
 * the {@link StandardAnalyzer}), {@code range} ({@link LongField#newRangeQuery} / {@link
 * DoubleField#newRangeQuery}: points or doc values, whichever leads, as Elasticsearch's {@code
 * IndexOrDocValuesQuery}), {@code bool} (must, filter, should, must_not). Sorts: one field ({@link
 * LongField#newSortField}, which skips non-competitive documents through the points) or the score,
 * counting hits exactly up to {@code track_total_hits} ({@link TopFieldCollectorManager}). A count
 * alone is {@link IndexSearcher#count} (answered from the points where it can). Aggregations are
 * collectors over the doc values, as Elasticsearch's: each aggregation collects a document into a
 * bucket ordinal (0 at the top), bucket aggregations give their sub-aggregations the ordinal of the
 * document's bucket. {@code terms} on a keyword (sorted-set doc values, segment ordinals mapped to
 * global buckets), {@code histogram} and fixed-interval {@code date_histogram} (a primitive hash
 * of bucket keys), and the metrics {@code min}, {@code max}, {@code sum}, {@code avg}, {@code
 * value_count} and {@code stats}.
 *
 * <p>Answer: {@code ID\tTOTAL\tIDS\t\t{"sort":[...],"aggs":{...}}}: each hit's sort value (or
 * score) and the aggregations in Elasticsearch's shape.
 */
final class Values {
  /** The corpus-with-values fields kept as doubles; the other numeric ones are longs. */
  private static final Set<String> DOUBLES = Set.of("rating");

  private static final QueryBuilder MATCH = new QueryBuilder(new StandardAnalyzer());

  private Values() {}

  static String answer(IndexSearcher searcher, String id, String bodyText) throws IOException {
    Map<String, Object> body = Json.parseObject(bodyText);
    Query query = query(body.get("query"));
    int size = body.get("size") instanceof Double d ? d.intValue() : 10;
    Object track = body.getOrDefault("track_total_hits", 10_000.0);
    int threshold =
        track instanceof Boolean b ? (b ? Integer.MAX_VALUE : 0) : ((Double) track).intValue();
    StringBuilder out = new StringBuilder(256).append(id).append('\t');
    if (body.get("aggs") instanceof Map<?, ?> spec) {
      if (size > 0) {
        throw new IllegalArgumentException("aggregations are run with size 0 here");
      }
      Aggs aggs = new Aggs(parseAggs(spec));
      searcher.search(query, (CollectorManager<Aggs, Aggs>) aggs);
      out.append(aggs.total).append("\t\t\t{\"sort\":[],\"aggs\":");
      aggs.json(out);
      return out.append('}').toString();
    }
    if (size == 0) {
      return out.append(searcher.count(query)).append("\t\t\t{\"sort\":[],\"aggs\":null}").toString();
    }
    boolean byField = body.get("sort") instanceof List<?>;
    TopDocs top =
        byField
            ? searcher.search(
                query, new TopFieldCollectorManager(sort(body.get("sort")), size, null, threshold))
            : searcher.search(query, new TopScoreDocCollectorManager(size, null, threshold));
    out.append(top.totalHits.value()).append('\t');
    StoredFields stored = searcher.storedFields();
    StringBuilder values = new StringBuilder("{\"sort\":[");
    ScoreDoc[] hits = top.scoreDocs;
    for (int i = 0; i < hits.length; i++) {
      if (i > 0) {
        out.append(',');
        values.append(',');
      }
      out.append(stored.document(hits[i].doc, Set.of(BenchIndex.ID)).get(BenchIndex.ID));
      values.append(byField ? ((FieldDoc) hits[i]).fields[0] : Float.toString(hits[i].score));
    }
    return out.append("\t\t").append(values).append("],\"aggs\":null}").toString();
  }

  // ---------------------------------------------------------------------------------------------
  // queries and sorts

  @SuppressWarnings("unchecked")
  static Query query(Object spec) {
    if (spec == null) {
      return new MatchAllDocsQuery();
    }
    Map.Entry<String, Object> only = single(spec, "query");
    Object args = only.getValue();
    return switch (only.getKey()) {
      case "match_all" -> new MatchAllDocsQuery();
      case "match_none" -> new MatchNoDocsQuery();
      case "match" -> {
        Map.Entry<String, Object> m = single(args, "match");
        Query q = MATCH.createBooleanQuery(m.getKey(), (String) m.getValue());
        yield q == null ? new MatchNoDocsQuery() : q;
      }
      case "range" -> range(single(args, "range"));
      case "bool" -> {
        BooleanQuery.Builder b = new BooleanQuery.Builder();
        for (Map.Entry<String, Object> e : ((Map<String, Object>) args).entrySet()) {
          BooleanClause.Occur occur =
              switch (e.getKey()) {
                case "must" -> BooleanClause.Occur.MUST;
                case "filter" -> BooleanClause.Occur.FILTER;
                case "should" -> BooleanClause.Occur.SHOULD;
                case "must_not" -> BooleanClause.Occur.MUST_NOT;
                default -> throw new IllegalArgumentException("bool: unknown key " + e.getKey());
              };
          List<Object> clauses =
              e.getValue() instanceof List<?> l ? (List<Object>) l : List.of(e.getValue());
          for (Object c : clauses) {
            b.add(query(c), occur);
          }
        }
        yield b.build();
      }
      default -> throw new IllegalArgumentException("unsupported query " + only.getKey());
    };
  }

  @SuppressWarnings("unchecked")
  private static Query range(Map.Entry<String, Object> fieldBounds) {
    String field = fieldBounds.getKey();
    Map<String, Object> b = (Map<String, Object>) fieldBounds.getValue();
    if (DOUBLES.contains(field)) {
      double lo = Double.NEGATIVE_INFINITY;
      double hi = Double.POSITIVE_INFINITY;
      if (b.get("gte") instanceof Double v) lo = v;
      if (b.get("gt") instanceof Double v) lo = Math.nextUp(v);
      if (b.get("lte") instanceof Double v) hi = v;
      if (b.get("lt") instanceof Double v) hi = Math.nextDown(v);
      return DoubleField.newRangeQuery(field, lo, hi);
    }
    long lo = Long.MIN_VALUE;
    long hi = Long.MAX_VALUE;
    if (b.get("gte") instanceof Double v) lo = v.longValue();
    if (b.get("gt") instanceof Double v) lo = v.longValue() + 1;
    if (b.get("lte") instanceof Double v) hi = v.longValue();
    if (b.get("lt") instanceof Double v) hi = v.longValue() - 1;
    return LongField.newRangeQuery(field, lo, hi);
  }

  private static Sort sort(Object spec) {
    Map.Entry<String, Object> key = single(((List<?>) spec).get(0), "sort");
    boolean reverse = "desc".equals(key.getValue());
    // Elasticsearch's default mode: a document's largest value when descending, its least when not.
    SortedNumericSelector.Type mode =
        reverse ? SortedNumericSelector.Type.MAX : SortedNumericSelector.Type.MIN;
    SortField f =
        DOUBLES.contains(key.getKey())
            ? DoubleField.newSortField(key.getKey(), reverse, mode)
            : LongField.newSortField(key.getKey(), reverse, mode);
    return new Sort(f);
  }

  @SuppressWarnings("unchecked")
  private static Map.Entry<String, Object> single(Object spec, String what) {
    if (!(spec instanceof Map<?, ?> m) || m.size() != 1) {
      throw new IllegalArgumentException(what + ": expected an object of one key");
    }
    return ((Map<String, Object>) m).entrySet().iterator().next();
  }

  // ---------------------------------------------------------------------------------------------
  // aggregations

  /** One aggregation over every segment, its state per bucket ordinal of its parent. */
  abstract static class Agg {
    final String name;

    Agg(String name) {
      this.name = name;
    }

    abstract LeafAgg leaf(LeafReaderContext context) throws IOException;

    /** The answer for the parent's bucket {@code ord}, as {@code "NAME":{...}}. */
    abstract void json(StringBuilder out, int ord);
  }

  interface LeafAgg {
    void collect(int doc, int ord) throws IOException;
  }

  @SuppressWarnings("unchecked")
  static List<Agg> parseAggs(Map<?, ?> spec) {
    List<Agg> aggs = new ArrayList<>();
    for (Map.Entry<String, Object> e : ((Map<String, Object>) spec).entrySet()) {
      Map<String, Object> def = new HashMap<>((Map<String, Object>) e.getValue());
      Object subSpec = def.remove("aggs");
      List<Agg> subs = subSpec == null ? List.of() : parseAggs((Map<?, ?>) subSpec);
      Map.Entry<String, Object> kind = single(def, "aggregation " + e.getKey());
      Map<String, Object> args = (Map<String, Object>) kind.getValue();
      String field = (String) args.get("field");
      aggs.add(
          switch (kind.getKey()) {
            case "terms" -> new Terms(e.getKey(), field, ((Double) args.get("size")).intValue(), subs);
            case "histogram" ->
                new Histogram(e.getKey(), field, (Double) args.get("interval"), false, subs);
            case "date_histogram" ->
                new Histogram(
                    e.getKey(), field, fixedMillis((String) args.get("fixed_interval")), true, subs);
            case "min", "max", "sum", "avg", "value_count", "stats" ->
                new Metric(e.getKey(), kind.getKey(), field);
            default -> throw new IllegalArgumentException("unsupported aggregation " + kind.getKey());
          });
    }
    return aggs;
  }

  private static double fixedMillis(String interval) {
    if (interval == null) {
      throw new IllegalArgumentException("date_histogram: only fixed_interval is supported");
    }
    long n = Long.parseLong(interval.substring(0, interval.length() - 1));
    return n
        * switch (interval.charAt(interval.length() - 1)) {
          case 'd' -> 86_400_000L;
          case 'h' -> 3_600_000L;
          case 'm' -> 60_000L;
          case 's' -> 1_000L;
          default -> throw new IllegalArgumentException("bad fixed_interval " + interval);
        };
  }

  /** A numeric field's values as doubles (longs converted, doubles decoded). */
  static double value(SortedNumericDocValues dv, boolean isDouble) throws IOException {
    long raw = dv.nextValue();
    return isDouble ? NumericUtils.sortableLongToDouble(raw) : raw;
  }

  /** The top-level aggregations and the count of matches, one collector for the whole search. */
  static final class Aggs implements Collector, CollectorManager<Aggs, Aggs> {
    final List<Agg> aggs;
    long total;

    Aggs(List<Agg> aggs) {
      this.aggs = aggs;
    }

    @Override
    public Aggs newCollector() {
      return this;
    }

    @Override
    public Aggs reduce(java.util.Collection<Aggs> collectors) {
      return this;
    }

    @Override
    public ScoreMode scoreMode() {
      return ScoreMode.COMPLETE_NO_SCORES;
    }

    @Override
    public LeafCollector getLeafCollector(LeafReaderContext context) throws IOException {
      LeafAgg[] leaves = new LeafAgg[aggs.size()];
      for (int i = 0; i < leaves.length; i++) {
        leaves[i] = aggs.get(i).leaf(context);
      }
      return new LeafCollector() {
        @Override
        public void setScorer(Scorable scorer) {}

        @Override
        public void collect(int doc) throws IOException {
          total++;
          for (LeafAgg leaf : leaves) {
            leaf.collect(doc, 0);
          }
        }
      };
    }

    void json(StringBuilder out) {
      objectOf(out, aggs, 0);
    }
  }

  static void objectOf(StringBuilder out, List<Agg> aggs, int ord) {
    out.append('{');
    for (int i = 0; i < aggs.size(); i++) {
      if (i > 0) {
        out.append(',');
      }
      aggs.get(i).json(out, ord);
    }
    out.append('}');
  }

  /** min, max, sum, avg, value_count, stats: per ordinal count, sum, min and max. */
  static final class Metric extends Agg {
    final String kind;
    final String field;
    final boolean isDouble;
    long[] count = new long[1];
    double[] sum = new double[1];
    double[] min = {Double.POSITIVE_INFINITY};
    double[] max = {Double.NEGATIVE_INFINITY};

    Metric(String name, String kind, String field) {
      super(name);
      this.kind = kind;
      this.field = field;
      this.isDouble = DOUBLES.contains(field);
    }

    private void grow(int ord) {
      if (ord >= count.length) {
        int n = Math.max(ord + 1, count.length * 2);
        int old = count.length;
        count = Arrays.copyOf(count, n);
        sum = Arrays.copyOf(sum, n);
        min = Arrays.copyOf(min, n);
        max = Arrays.copyOf(max, n);
        Arrays.fill(min, old, n, Double.POSITIVE_INFINITY);
        Arrays.fill(max, old, n, Double.NEGATIVE_INFINITY);
      }
    }

    @Override
    LeafAgg leaf(LeafReaderContext context) throws IOException {
      SortedNumericDocValues dv = DocValues.getSortedNumeric(context.reader(), field);
      return (doc, ord) -> {
        if (!dv.advanceExact(doc)) {
          return;
        }
        grow(ord);
        for (int i = dv.docValueCount(); i > 0; i--) {
          double v = value(dv, isDouble);
          count[ord]++;
          sum[ord] += v;
          min[ord] = Math.min(min[ord], v);
          max[ord] = Math.max(max[ord], v);
        }
      };
    }

    @Override
    void json(StringBuilder out, int ord) {
      long n = ord < count.length ? count[ord] : 0;
      Json.quote(out, name).append(':');
      switch (kind) {
        case "value_count" -> out.append("{\"value\":").append(n).append('}');
        case "sum" -> out.append("{\"value\":").append(n == 0 ? 0.0 : sum[ord]).append('}');
        case "min" -> out.append("{\"value\":").append(n == 0 ? "null" : min[ord]).append('}');
        case "max" -> out.append("{\"value\":").append(n == 0 ? "null" : max[ord]).append('}');
        case "avg" -> out.append("{\"value\":").append(n == 0 ? "null" : sum[ord] / n).append('}');
        default ->
            out.append("{\"count\":").append(n)
                .append(",\"min\":").append(n == 0 ? "null" : min[ord])
                .append(",\"max\":").append(n == 0 ? "null" : max[ord])
                .append(",\"avg\":").append(n == 0 ? "null" : sum[ord] / n)
                .append(",\"sum\":").append(n == 0 ? 0.0 : sum[ord])
                .append('}');
      }
    }
  }

  /**
   * The buckets of one parent ordinal: each key's own ordinal (in order of first sight, the
   * sub-aggregations' ordinal) and its count.
   */
  abstract static class Buckets extends Agg {
    final List<Agg> subs;
    final LongIntHash ords = new LongIntHash();
    long[] counts = new long[16];
    int buckets;

    Buckets(String name, List<Agg> subs) {
      super(name);
      this.subs = subs;
    }

    /** The ordinal of bucket {@code key} under parent {@code ord}, made on first sight. */
    int bucket(long key, int ord) {
      if (ord != 0) {
        throw new IllegalArgumentException("bucket aggregations nest one level only here");
      }
      int b = ords.get(key);
      if (b < 0) {
        b = buckets++;
        ords.put(key, b);
        grow(b);
      }
      return b;
    }

    void grow(int b) {
      if (b >= counts.length) {
        counts = Arrays.copyOf(counts, Math.max(b + 1, counts.length * 2));
      }
    }

    LeafAgg[] subLeaves(LeafReaderContext context) throws IOException {
      LeafAgg[] leaves = new LeafAgg[subs.size()];
      for (int i = 0; i < leaves.length; i++) {
        leaves[i] = subs.get(i).leaf(context);
      }
      return leaves;
    }

    static void collectInto(LeafAgg[] subs, int doc, int b) throws IOException {
      for (LeafAgg s : subs) {
        s.collect(doc, b);
      }
    }

    void bucketJson(StringBuilder out, String key, int b) {
      out.append("{\"key\":").append(key).append(",\"doc_count\":").append(b < 0 ? 0 : counts[b]);
      for (Agg s : subs) {
        out.append(',');
        s.json(out, b < 0 ? Integer.MAX_VALUE : b);
      }
      out.append('}');
    }
  }

  /** histogram and fixed-interval date_histogram: empty buckets between the first and last. */
  static final class Histogram extends Buckets {
    final String field;
    final double interval;
    final boolean dates;
    final boolean isDouble;

    Histogram(String name, String field, double interval, boolean dates, List<Agg> subs) {
      super(name, subs);
      this.field = field;
      this.interval = interval;
      this.dates = dates;
      this.isDouble = DOUBLES.contains(field);
    }

    @Override
    LeafAgg leaf(LeafReaderContext context) throws IOException {
      SortedNumericDocValues dv = DocValues.getSortedNumeric(context.reader(), field);
      LeafAgg[] leaves = subLeaves(context);
      long step = (long) interval;
      return (doc, ord) -> {
        if (!dv.advanceExact(doc)) {
          return;
        }
        long last = Long.MIN_VALUE;
        for (int i = dv.docValueCount(); i > 0; i--) {
          long key =
              dates
                  ? Math.floorDiv(dv.nextValue(), step)
                  : (long) Math.floor(value(dv, isDouble) / interval);
          if (key == last) {
            continue; // a document counts once per bucket
          }
          last = key;
          int b = bucket(key, ord);
          counts[b]++;
          collectInto(leaves, doc, b);
        }
      };
    }

    @Override
    void json(StringBuilder out, int ord) {
      Json.quote(out, name).append(":{\"buckets\":[");
      if (buckets > 0 && ord == 0) {
        long lo = Long.MAX_VALUE;
        long hi = Long.MIN_VALUE;
        for (long k : ords.keys()) {
          lo = Math.min(lo, k);
          hi = Math.max(hi, k);
        }
        for (long k = lo; k <= hi; k++) {
          if (k > lo) {
            out.append(',');
          }
          String key = dates ? Long.toString(k * (long) interval) : Double.toString(k * interval);
          bucketJson(out, key, ords.get(k));
        }
      }
      out.append("]}");
    }
  }

  /** terms on a keyword field: sorted-set ordinals of each segment mapped to global buckets. */
  static final class Terms extends Buckets {
    final String field;
    final int size;
    final List<BytesRef> keys = new ArrayList<>();
    final Map<BytesRef, Integer> ids = new HashMap<>();

    Terms(String name, String field, int size, List<Agg> subs) {
      super(name, subs);
      this.field = field;
      this.size = size;
    }

    @Override
    LeafAgg leaf(LeafReaderContext context) throws IOException {
      SortedSetDocValues dv = DocValues.getSortedSet(context.reader(), field);
      int[] global = new int[(int) Math.min(Integer.MAX_VALUE, dv.getValueCount())];
      Arrays.fill(global, -1);
      LeafAgg[] leaves = subLeaves(context);
      return (doc, ord) -> {
        if (ord != 0) {
          throw new IllegalArgumentException("bucket aggregations nest one level only here");
        }
        if (!dv.advanceExact(doc)) {
          return;
        }
        for (int i = dv.docValueCount(); i > 0; i--) {
          int segOrd = (int) dv.nextOrd();
          int g = global[segOrd];
          if (g < 0) {
            BytesRef term = BytesRef.deepCopyOf(dv.lookupOrd(segOrd));
            g = ids.computeIfAbsent(term, t -> {
              keys.add(t);
              return keys.size() - 1;
            });
            global[segOrd] = g;
            grow(g);
          }
          // A term's global id is its bucket's ordinal, as Elasticsearch's global ordinals are.
          counts[g]++;
          collectInto(leaves, doc, g);
        }
      };
    }

    @Override
    void json(StringBuilder out, int ord) {
      Integer[] order = new Integer[keys.size()];
      for (int i = 0; i < order.length; i++) {
        order[i] = i;
      }
      Arrays.sort(
          order,
          (x, y) -> {
            long cx = counts[x];
            long cy = counts[y];
            return cx != cy ? Long.compare(cy, cx) : keys.get(x).compareTo(keys.get(y));
          });
      long other = 0;
      StringBuilder shown = new StringBuilder();
      for (int i = 0; i < order.length; i++) {
        if (i >= size) {
          other += counts[order[i]];
          continue;
        }
        if (i > 0) {
          shown.append(',');
        }
        String key = Json.quote(new StringBuilder(), keys.get(order[i]).utf8ToString()).toString();
        bucketJson(shown, key, order[i]);
      }
      Json.quote(out, name)
          .append(":{\"doc_count_error_upper_bound\":0,\"sum_other_doc_count\":")
          .append(other)
          .append(",\"buckets\":[")
          .append(shown)
          .append("]}");
    }
  }

  /** An open-addressing map of long keys to non-negative ints (-1: absent), as ES's bucket ords. */
  static final class LongIntHash {
    private long[] keys = new long[64];
    private int[] values = new int[64];
    private boolean[] used = new boolean[64];
    private int size;

    private static int slot(long key, int mask) {
      long h = key * 0x9E3779B97F4A7C15L;
      return (int) (h ^ (h >>> 32)) & mask;
    }

    int get(long key) {
      int mask = keys.length - 1;
      for (int i = slot(key, mask); used[i]; i = (i + 1) & mask) {
        if (keys[i] == key) {
          return values[i];
        }
      }
      return -1;
    }

    void put(long key, int value) {
      if (2 * (size + 1) > keys.length) {
        long[] oldKeys = keys;
        int[] oldValues = values;
        boolean[] oldUsed = used;
        keys = new long[oldKeys.length * 2];
        values = new int[oldKeys.length * 2];
        used = new boolean[oldKeys.length * 2];
        size = 0;
        for (int i = 0; i < oldKeys.length; i++) {
          if (oldUsed[i]) {
            put(oldKeys[i], oldValues[i]);
          }
        }
      }
      int mask = keys.length - 1;
      int i = slot(key, mask);
      while (used[i] && keys[i] != key) {
        i = (i + 1) & mask;
      }
      if (!used[i]) {
        size++;
      }
      used[i] = true;
      keys[i] = key;
      values[i] = value;
    }

    long[] keys() {
      long[] out = new long[size];
      int n = 0;
      for (int i = 0; i < keys.length; i++) {
        if (used[i]) {
          out[n++] = keys[i];
        }
      }
      return out;
    }
  }
}
