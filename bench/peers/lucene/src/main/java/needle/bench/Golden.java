package needle.bench;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.StoredFields;
import org.apache.lucene.queryparser.classic.MultiFieldQueryParser;
import org.apache.lucene.queryparser.classic.ParseException;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.similarities.BM25Similarity;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.apache.lucene.store.Directory;

/**
 * Writes Lucene's top-10 results for a corpus and a query set as a golden file for Needle.
 *
 * <pre>
 * Golden --corpus FILE.jsonl[.gz] --queries-dir DIR --out FILE [--or N] [--and N] [--phrase N]
 * </pre>
 *
 * <p>{@code --or}, {@code --and} and {@code --phrase} set how many queries of each form to collect
 * (defaults 150, 100 and 100).
 *
 * <p>Indexing: see {@link CorpusIndex} (one thread, file order, one segment, {@link
 * StandardAnalyzer} defaults). Searching uses {@link BM25Similarity} defaults.
 *
 * <p>Queries: the TREC Terabyte 2005 efficiency topics and the MS MARCO dev-subset questions,
 * interleaved line by line. Each usable raw query gives up to three Needle query strings (OR
 * {@code a b c}, AND {@code +a +b +c}, PHRASE {@code "a b"}), each parsed with {@link
 * MultiFieldQueryParser} over all text fields and kept if it has at least one hit.
 *
 * <p>Output, one JSON object a line: {@code
 * {"form":"or","query":"a b","total":12,"hits":[{"id":"...","score":1.2345}]}}, scores printed with
 * {@link Float#toString} (shortest string that round-trips the float).
 */
public final class Golden {
  /** Number of hits kept per query. */
  private static final int TOP_K = 10;

  /** The usage line printed on bad arguments. */
  private static final String USAGE =
      "usage: Golden --corpus FILE.jsonl[.gz] --queries-dir DIR --out FILE"
          + " [--or N] [--and N] [--phrase N]";

  /** Characters of Lucene's classic query syntax; a query whose tokens hold one is skipped. */
  private static final String SYNTAX_CHARS = "+-&|!(){}[]^\"~*?:\\/";

  /**
   * The three query forms, in the order they are tried for each raw query, with the default number
   * of queries to collect of each (overridden by {@code --or}, {@code --and}, {@code --phrase}).
   */
  enum Form {
    OR("or", 150),
    AND("and", 100),
    PHRASE("phrase", 100);

    final String label;
    final int defaultQuota;

    Form(String label, int defaultQuota) {
      this.label = label;
      this.defaultQuota = defaultQuota;
    }

    /** The command-line option setting this form's quota. */
    String option() {
      return "--" + label;
    }
  }

  record Hit(String id, float score) {}

  record Result(Form form, String query, long total, List<Hit> hits) {}

  private final Analyzer analyzer = new StandardAnalyzer();
  private final List<String> fields;
  private final IndexSearcher searcher;
  private final StoredFields storedFields;
  private final MultiFieldQueryParser parser;

  /** How many queries of each form to collect, indexed by {@link Form#ordinal()}. */
  private final int[] quotas;

  private Golden(List<String> fields, DirectoryReader reader, int[] quotas) throws IOException {
    this.fields = fields;
    this.quotas = quotas.clone();
    this.searcher = new IndexSearcher(reader);
    this.searcher.setSimilarity(new BM25Similarity());
    this.storedFields = reader.storedFields();
    this.parser = new MultiFieldQueryParser(fields.toArray(new String[0]), analyzer);
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> opts = parseArgs(args);
    Path corpus = Path.of(opts.get("--corpus"));
    Path queriesDir = Path.of(opts.get("--queries-dir"));
    Path out = Path.of(opts.get("--out"));
    int[] quotas = quotas(opts);

    long t0 = System.nanoTime();
    try (Directory dir = new ByteBuffersDirectory()) {
      List<String> ids = new ArrayList<>();
      SortedSet<String> fields = CorpusIndex.index(corpus, dir, ids);
      long t1 = System.nanoTime();
      try (DirectoryReader reader = DirectoryReader.open(dir)) {
        CorpusIndex.checkDocOrder(reader, ids);
        Golden golden = new Golden(new ArrayList<>(fields), reader, quotas);
        List<Result> results = golden.run(readQueries(queriesDir));
        write(out, results);
        long t2 = System.nanoTime();
        System.err.printf(
            "indexed %d docs, fields %s in %.2f s; %s in %.2f s; wrote %s%n",
            ids.size(), fields, (t1 - t0) / 1e9, countByForm(results), (t2 - t1) / 1e9, out);
      }
    }
  }

  // ---------------------------------------------------------------- arguments

  private static Map<String, String> parseArgs(String[] args) {
    Set<String> known = new HashSet<>(List.of("--corpus", "--queries-dir", "--out"));
    for (Form form : Form.values()) {
      known.add(form.option());
    }
    Map<String, String> opts = new java.util.HashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      if (!known.contains(args[i])) {
        usageError("unknown option " + args[i]);
      }
      opts.put(args[i], args[i + 1]);
    }
    for (String required : List.of("--corpus", "--queries-dir", "--out")) {
      if (!opts.containsKey(required) || args.length % 2 != 0) {
        usageError(null);
      }
    }
    return opts;
  }

  /** The quota of each form: its option's value, or its default. */
  private static int[] quotas(Map<String, String> opts) {
    int[] quotas = new int[Form.values().length];
    for (Form form : Form.values()) {
      String value = opts.get(form.option());
      int quota = form.defaultQuota;
      if (value != null) {
        try {
          quota = Integer.parseInt(value);
        } catch (NumberFormatException e) {
          quota = -1;
        }
        if (quota < 0) {
          usageError(form.option() + " needs a non-negative integer, not " + value);
        }
      }
      quotas[form.ordinal()] = quota;
    }
    return quotas;
  }

  private static void usageError(String message) {
    if (message != null) {
      System.err.println("Golden: " + message);
    }
    System.err.println(USAGE);
    System.exit(2);
  }

  // ---------------------------------------------------------------- queries

  /** Reads both topic files and interleaves them: tb[0], ms[0], tb[1], ms[1], ... */
  private static List<String> readQueries(Path dir) throws IOException {
    List<String> terabyte = readTopics(dir.resolve("topics.terabyte05.efficiency.txt"), ':');
    List<String> msmarco = readTopics(dir.resolve("topics.msmarco-passage.dev-subset.txt"), '\t');
    List<String> all = new ArrayList<>(terabyte.size() + msmarco.size());
    for (int i = 0; i < Math.max(terabyte.size(), msmarco.size()); i++) {
      if (i < terabyte.size()) {
        all.add(terabyte.get(i));
      }
      if (i < msmarco.size()) {
        all.add(msmarco.get(i));
      }
    }
    return all;
  }

  /** Reads lines {@code qid<sep>query}, returning the query texts in file order. */
  private static List<String> readTopics(Path file, char separator) throws IOException {
    List<String> queries = new ArrayList<>();
    for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
      int cut = line.indexOf(separator);
      if (cut >= 0) {
        queries.add(line.substring(cut + 1));
      }
    }
    return queries;
  }

  /** Builds, runs and keeps queries of each form until every quota is met. */
  private List<Result> run(List<String> rawQueries) throws IOException, ParseException {
    List<Result> results = new ArrayList<>();
    int[] counts = new int[Form.values().length];
    Set<String> seen = new HashSet<>();
    for (String raw : rawQueries) {
      if (quotasMet(counts, quotas)) {
        break;
      }
      List<String> tokens = analyze(raw);
      if (!usable(tokens)) {
        continue;
      }
      for (Form form : Form.values()) {
        if (counts[form.ordinal()] >= quotas[form.ordinal()]
            || (form != Form.OR && tokens.size() < 2)) {
          continue;
        }
        Result result = firstWithHits(form, candidates(form, tokens), seen);
        if (result != null) {
          results.add(result);
          counts[form.ordinal()]++;
        }
      }
    }
    if (!quotasMet(counts, quotas)) {
      throw new IllegalStateException("not enough queries with hits");
    }
    return results;
  }

  private static boolean quotasMet(int[] counts, int[] quotas) {
    for (Form form : Form.values()) {
      if (counts[form.ordinal()] < quotas[form.ordinal()]) {
        return false;
      }
    }
    return true;
  }

  /**
   * The Needle query strings to try for a form, in order: one for OR and AND, every adjacent token
   * pair for PHRASE.
   */
  private static List<String> candidates(Form form, List<String> tokens) {
    return switch (form) {
      case OR -> List.of(String.join(" ", tokens));
      case AND -> List.of("+" + String.join(" +", tokens));
      case PHRASE -> {
        List<String> pairs = new ArrayList<>();
        for (int i = 0; i + 1 < tokens.size(); i++) {
          pairs.add("\"" + tokens.get(i) + " " + tokens.get(i + 1) + "\"");
        }
        yield pairs;
      }
    };
  }

  /** Runs the candidates not emitted before and returns the first with a hit, or null. */
  private Result firstWithHits(Form form, List<String> candidates, Set<String> seen)
      throws IOException, ParseException {
    for (String query : candidates) {
      if (!seen.add(form.label + "\t" + query)) {
        continue;
      }
      Result result = search(form, query);
      if (result.total() > 0) {
        return result;
      }
    }
    return null;
  }

  private Result search(Form form, String queryString) throws IOException, ParseException {
    Query query = parser.parse(queryString);
    TopDocs top = searcher.search(query, TOP_K);
    List<Hit> hits = new ArrayList<>(top.scoreDocs.length);
    for (ScoreDoc sd : top.scoreDocs) {
      hits.add(new Hit(storedFields.document(sd.doc).get(CorpusIndex.ID_FIELD), sd.score));
    }
    return new Result(form, queryString, searcher.count(query), hits);
  }

  /** The terms the analyzer makes of {@code text} (the same analyzer as the index). */
  private List<String> analyze(String text) {
    List<String> tokens = new ArrayList<>();
    try (TokenStream stream = analyzer.tokenStream(fields.get(0), text)) {
      CharTermAttribute term = stream.addAttribute(CharTermAttribute.class);
      stream.reset();
      while (stream.incrementToken()) {
        tokens.add(term.toString());
      }
      stream.end();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return tokens;
  }

  /**
   * A token list is usable if it is non-empty, no token holds query syntax, and each token
   * analyzes back to exactly itself (so the query parser sees the same terms).
   */
  private boolean usable(List<String> tokens) {
    if (tokens.isEmpty()) {
      return false;
    }
    for (String token : tokens) {
      if (token.chars().anyMatch(c -> SYNTAX_CHARS.indexOf(c) >= 0)
          || !analyze(token).equals(List.of(token))) {
        return false;
      }
    }
    return true;
  }

  // ---------------------------------------------------------------- output

  private static void write(Path out, List<Result> results) throws IOException {
    Path parent = out.toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
    try (BufferedWriter writer = Files.newBufferedWriter(out, StandardCharsets.UTF_8)) {
      for (Result result : results) {
        writer.write(toJson(result));
        writer.write('\n');
      }
    }
  }

  private static String toJson(Result result) {
    StringBuilder sb = new StringBuilder();
    sb.append("{\"form\":");
    Json.quote(sb, result.form().label);
    sb.append(",\"query\":");
    Json.quote(sb, result.query());
    sb.append(",\"total\":").append(result.total()).append(",\"hits\":[");
    for (int i = 0; i < result.hits().size(); i++) {
      Hit hit = result.hits().get(i);
      sb.append(i == 0 ? "{\"id\":" : ",{\"id\":");
      Json.quote(sb, hit.id());
      sb.append(",\"score\":").append(Float.toString(hit.score())).append('}');
    }
    return sb.append("]}").toString();
  }

  private static String countByForm(List<Result> results) {
    int[] counts = new int[Form.values().length];
    results.forEach(r -> counts[r.form().ordinal()]++);
    StringBuilder sb = new StringBuilder();
    for (Form form : Form.values()) {
      sb.append(sb.length() == 0 ? "" : ", ").append(counts[form.ordinal()]).append(' ');
      sb.append(form.label);
    }
    return sb.append(" queries").toString();
  }
}
