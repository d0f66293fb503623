import java.io.*;
import java.nio.charset.StandardCharsets;
import org.apache.lucene.analysis.TokenFilter;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.ar.ArabicNormalizationFilter;
import org.apache.lucene.analysis.ar.ArabicStemFilter;
import org.apache.lucene.analysis.core.KeywordTokenizer;
import org.apache.lucene.analysis.de.GermanLightStemFilter;
import org.apache.lucene.analysis.de.GermanNormalizationFilter;
import org.apache.lucene.analysis.es.SpanishLightStemFilter;
import org.apache.lucene.analysis.fr.FrenchLightStemFilter;
import org.apache.lucene.analysis.it.ItalianLightStemFilter;
import org.apache.lucene.analysis.pt.PortugueseLightStemFilter;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.analysis.tr.TurkishLowerCaseFilter;

/**
 * Runs one of Lucene's light stem filters (or German normalization, or
 * Turkish lowercasing, or Arabic's stemmer or normalization) on each
 * line of standard input, `Filter<TAB>word` (French, German, Spanish, Italian,
 * Portuguese, GermanNormalization, TurkishLowerCase, Arabic or ArabicNormalization), and prints what it makes of the word, for
 * light_stem_cases.py.
 */
public class LightStemCases {
  public static void main(String[] args) throws IOException {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    PrintStream out = new PrintStream(new BufferedOutputStream(System.out), false, StandardCharsets.UTF_8);
    KeywordTokenizer tokenizer = new KeywordTokenizer();
    String line;
    while ((line = in.readLine()) != null) {
      String[] parts = line.split("\t", -1);
      tokenizer.setReader(new StringReader(parts[1]));
      TokenFilter filter = switch (parts[0]) {
        case "French" -> new FrenchLightStemFilter(tokenizer);
        case "German" -> new GermanLightStemFilter(tokenizer);
        case "Spanish" -> new SpanishLightStemFilter(tokenizer);
        case "Italian" -> new ItalianLightStemFilter(tokenizer);
        case "Portuguese" -> new PortugueseLightStemFilter(tokenizer);
        case "GermanNormalization" -> new GermanNormalizationFilter(tokenizer);
        case "TurkishLowerCase" -> new TurkishLowerCaseFilter(tokenizer);
        case "Arabic" -> new ArabicStemFilter(tokenizer);
        case "ArabicNormalization" -> new ArabicNormalizationFilter(tokenizer);
        default -> throw new IllegalArgumentException(parts[0]);
      };
      try (TokenStream stream = filter) {
        CharTermAttribute term = stream.addAttribute(CharTermAttribute.class);
        stream.reset();
        if (!stream.incrementToken()) throw new IllegalStateException("no token for " + line);
        out.println(term.toString());
        stream.end();
      }
    }
    out.flush();
  }
}
